// Package discover finds GGUF model files that other apps already keep on
// disk — LM Studio's model folders, the Hugging Face hub cache and
// Ollama's models (found through its manifests: its GGUF blobs have no
// .gguf to find them by) — so the desktop app can offer them for use in
// place, without copying gigabytes.
//
// It knows nothing of the UI:
//
//	found, err := discover.Find(ctx, discover.DefaultLocations())
//	for _, f := range found {
//		fmt.Println(f.Source, f.Name, f.Path)
//	}
//
// Only files that start with the GGUF magic are reported. Vision projector
// files (mmproj), unfinished downloads and the second and later parts of a
// split model are left out: none of them can be opened as a chat model on
// their own.
package discover
