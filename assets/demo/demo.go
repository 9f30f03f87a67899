// Package demo is the model built into the churon binary: Karpathy's
// tinyllamas stories260K, a 260-thousand-parameter Llama trained on
// TinyStories (MIT licence; see README.md and LICENSE beside this file).
// It writes short, simple English stories and nothing else — it is there
// so that a first start, offline and before any download, ends in a chat
// that streams real tokens, and shows what a real model adds.
//
// It is loaded from the binary's memory, never written to disk; front
// ends and services name it by Path, which is not a file's path.
package demo

import (
	_ "embed"
	"strings"
)

//go:embed stories260K.gguf
var model []byte

// Path names the demo model wherever a model's path is expected (the
// session's LoadModel, a conversation's model, the recent models). It
// cannot be a file's path: no file name starts with the scheme.
const Path = "churon:demo/stories260K.gguf"

// Name is the demo's short name, as a person reads it.
const Name = "stories260K"

// SHA256 is the embedded file's checksum (a test pins it).
const SHA256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"

// Bytes is the GGUF file. It lives in the binary's read-only data: do
// not modify it.
func Bytes() []byte { return model }

// IsPath reports whether path names the demo model.
func IsPath(path string) bool { return path == Path || strings.EqualFold(path, Path) }
