// Package catalog is Churon's curated list of models to start with: a
// dozen good small and medium instruct models in GGUF form, each with its
// Hugging Face repository, the recommended file (usually the Q4_K_M
// quantization), an approximate size, its shape and licence, and a
// one-line description in English and Korean. The list is catalog.json,
// embedded in the binary.
//
//	c, err := catalog.Load()
//	for _, m := range c.Models {
//		fmt.Println(m.Name, m.Repo, m.File, m.Describe("ko"))
//	}
//	first := c.Recommend(func(m catalog.Model) bool { return fits(m) })
//
// Sizes are approximate (the download uses the hub's own listing for the
// exact size and SHA-256). The shape fields (layers, heads, KV heads,
// head dimension, width) let the app estimate the memory a model needs
// before anything is fetched; they are what the model's GGUF header says.
package catalog
