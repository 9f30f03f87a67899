// Package compare runs one prompt through 2 to 4 models — typically one
// model in several quantizations — and measures what a smaller file costs
// in quality and buys in speed: outputs side by side; file size, bits per
// weight, resident memory, load time, time to first token, prompt and
// generation tokens per second; and, against a reference model, per-token
// KL divergence, top-1 agreement, the change in probability of the
// reference's token and the perplexity ratio. It imports no UI toolkit:
// the desktop app's Compare page and `churon compare` both drive it, and
// its API uses no engine types, so the UI need not import the engine.
//
//	s := compare.DefaultSampling()
//	s.MaxTokens, s.Seed = 128, compare.RandomSeed()
//	h := compare.Start(ctx, compare.Options{
//		Models:   []string{"m-F16.gguf", "m-Q8_0.gguf", "m-Q4_0.gguf"},
//		Prompt:   "김치찌개 끓이는 법을 알려 주세요",
//		Sampling: s,
//	})
//	for ev := range h.Events() {
//		switch e := ev.(type) {
//		case compare.Token:        // e.Model's answer grows by e.Text
//		case compare.QualityReady: // e.Quality.KLDMean …
//		}
//	}
//	res, err := h.Wait()
//	img := compare.Chart(res, compare.ChartOptions{})
//
// # One model at a time
//
// Models run one after another, never concurrently. Decoding reads every
// weight once per token, so its speed is set by memory bandwidth: two
// models decoding together would share the bandwidth and each would
// report a speed that is neither its own nor reproducible; and four
// models may not fit in memory together. Each model is loaded, answers,
// is scored and is unloaded before the next is loaded. The reference runs
// first because the others are scored over its answer.
//
// # The same tokens for every model
//
// The prompt is rendered with the reference's chat template (raw when it
// has none, or when asked) and tokenized once by the reference; every
// model is fed those ids with the same sampler settings and seed. That is
// only meaningful when all models share one vocabulary, so Run first
// hashes each file's token list (text and type of every token) and
// refuses models whose lists differ (VocabError): KL divergence needs
// both distributions over the same tokens.
//
// # Quality, teacher-forced
//
// Quality is measured teacher-forced, not on each model's own answer:
// every model is fed the prompt plus the reference's answer, and the
// built-in English and Korean texts (Texts), with Sequence.FeedAll, and
// the logits it predicts each next token with are compared with the
// reference's at the same position. Per position, in float64 from the
// float32 logits: KLD(reference ‖ model) from the log-softmax of both,
// whether the top-1 tokens agree, and Δp = p_model − p_reference of the
// token that actually came next; per segment and pooled: mean and 99th
// percentile KLD, top-1 agreement, mean Δp and the perplexity ratio
// (model's perplexity over the same tokens / reference's).
//
// Memory: the reference's rows are needed until the last model is scored,
// and T positions × vocabulary floats is large (500 positions × 152k
// tokens ≈ 300 MB for Qwen). They are not kept in memory and not
// quantized: the reference writes its rows, exactly as float32, to a
// temporary file in Churon's cache folder (Options.ScratchDir), deleted
// when Run returns, and each model reads
// them back one chunk of 32 positions at a time, next to its own chunk
// (about 2 × 19 MB with a 152k vocabulary). Quantizing them would save
// disk, not memory, and would make a model compared with itself score a
// small non-zero KLD; exact rows give exactly 0. Only each position's
// normaliser and top token stay in memory.
//
// # Resident memory
//
// RSSBytes is the growth of the process's resident set (/proc/self/statm)
// from before the model's load (after returning freed heap to the system)
// to right after its answer: mapped weight pages count once touched, so
// it is what answering really occupied (an untied embedding is paged in
// only for the tokens used). Without /proc it is the weights' size plus
// the KV cache, and Result.RSSSource says "estimate".
//
// # Results
//
// A Result is plain data with a stable JSON form (`churon compare --json`
// prints it; Save stores it in the chat database and Load reopens it).
// Chart draws the per-token KLD along the answer as an image.Image;
// WriteMarkdown/ExportMarkdown and WriteHTML/ExportHTML export the table,
// the outputs and the chart, the HTML highlighting the tokens where each
// model's top-1 differs from the reference's.
package compare
