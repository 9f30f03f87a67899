// Package engine is Churon's inference engine: it loads a GGUF model
// (Load), describes it (Model.Info), and runs Sequences — streams of
// tokens with their own KV cache — that feed tokens, expose logits and
// generate completions with per-token timing.
//
//	m, err := engine.Load(ctx, "model.gguf", engine.LoadOptions{})
//	if err != nil { ... }
//	defer m.Close()
//	seq, _ := m.NewSequence(engine.SequenceOptions{})
//	ids, _, _ := m.ChatTokens(ctx, []chat.Message{{Role: "user", Content: "안녕하세요"}})
//	res, err := seq.Generate(ctx, ids, engine.GenerateOptions{MaxTokens: 64}, func(t engine.Token) error {
//		fmt.Print(t.Text)
//		return nil
//	})
//
// Where a model runs is chosen at Load (LoadOptions.Device, GPULayers):
// the CPU always, and an accelerator registered with engine/backend when
// one probes; Info.Backend says what runs where and Info.DeviceNotes why
// an accelerator is not used. An accelerator that fails during a pass
// hands the model to the CPU and the pass runs again there.
//
// The engine never imports the app or the UI; the session manager is its
// only caller in the desktop app.
package engine
