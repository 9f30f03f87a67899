// Package library keeps track of the GGUF models on this machine: those
// downloaded into the library folder, those in folders the person added,
// and single files used in place (imported by reference, never copied).
// A small JSON index beside the models remembers where each came from
// (repository, revision, file, SHA-256) and which folders and files were
// added; everything else is read from the files' GGUF headers.
//
//	lib, err := library.Open(dir, header.Local)
//	models, err := lib.List(ctx)
//	err = lib.Record(path, library.Origin{Repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF", File: "...", SHA256: "..."})
package library
