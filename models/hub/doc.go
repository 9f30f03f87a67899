// Package hub is a small client for the Hugging Face Hub's HTTP API, as
// much of it as finding and fetching GGUF models needs: search models that
// carry GGUF files, list a repository's files with their sizes and LFS
// SHA-256 digests, build download URLs, and group a repository's GGUF files
// into quantization variants (joining the parts of split files).
//
//	c := hub.New(hub.Options{}) // https://huggingface.co, no token
//	models, err := c.Search(ctx, "qwen2.5 instruct", hub.SearchOptions{Limit: 20})
//	files, err := c.Files(ctx, models[0].ID, "main")
//	for _, v := range hub.Variants(files) {
//		fmt.Println(v.Quant, v.Size, len(v.Files))
//	}
//
// The base URL is configurable (tests, mirrors). An access token, when set,
// is sent only to the hub's own host and never appears in errors.
package hub
