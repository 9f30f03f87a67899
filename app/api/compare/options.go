package compare

// Options describe a comparison.
type Options struct {
	// Models are 2 to 4 GGUF files sharing one vocabulary, typically one
	// model in several quantizations. The same file may appear twice (a
	// model compared with itself scores exactly KLD 0).
	Models []string
	// Ref is the reference model, one of Models; empty picks the one with
	// the most bits per weight (the first of equals).
	Ref string
	// Prompt is the user's message; System an optional system prompt.
	Prompt, System string
	// Raw feeds the prompt as is instead of rendering it with the
	// reference's chat template (a reference without a template is raw
	// anyway).
	Raw bool
	// Sampling holds the sampler settings, the seed and MaxTokens, the
	// same for every model (start from DefaultSampling; a caller that
	// wants a fresh seed picks one, e.g. RandomSeed). The zero value
	// means DefaultSampling.
	Sampling Sampling
	// Threads for the CPU backend (0: the engine's default).
	Threads int
	// KV is the KV cache type of every model: "f16" (the default when
	// empty) or "f32".
	KV string
	// Context is each sequence's capacity; 0 sizes it to the prompt plus
	// MaxTokens (or the engine's default when MaxTokens is 0), and to the
	// longest built-in text.
	Context int
	// InMemory reads weights into memory instead of mapping the files.
	InMemory bool
	// TextTokens caps the tokens scored per built-in text: 0 means
	// DefaultTextTokens, a negative value skips the built-in texts.
	TextTokens int
	// Title names the comparison; empty makes one from the prompt.
	Title string
	// ScratchDir receives the temporary file of the reference's logits
	// (deleted when Run returns); empty means paths.CacheDir().
	ScratchDir string
}

// DefaultTextTokens is the default cap on tokens per built-in text: about
// the whole text with a byte-level BPE vocabulary, a bounded share of it
// with a byte-fallback one that spends a token per byte.
const DefaultTextTokens = 512

// The sampler fields a comparison starts from, the same on the Compare
// page and for `churon compare`: greedy decoding, so that the models'
// answers differ only where the models do; 128 tokens; seed 1, so that a
// run again answers the same. The rest of the sampler is DefaultSampling.
const (
	PageMaxTokens   = 128
	PageTemperature = 0.0
	PageSeed        = 1
)
