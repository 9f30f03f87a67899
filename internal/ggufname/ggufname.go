// Package ggufname reads what the names of GGUF files say, the way
// llama.cpp and the hub name them: split models' parts
// ("name-00002-of-00005.gguf") and the multimodal projectors shipped next
// to models. The library, the folder scan and the hub's file lists all
// group parts and skip projectors, and must agree on which files those
// are.
package ggufname

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var partRE = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// Split parses the name of one part of a split model: for
// "dir/name-00002-of-00005.gguf" it returns "dir/name", 2, 5 and true.
// ok is false for any other name. The extension is matched as written
// (lower case), as llama.cpp writes it.
func Split(name string) (prefix string, part, total int, ok bool) {
	m := partRE.FindStringSubmatch(name)
	if m == nil {
		return name, 0, 0, false
	}
	part, _ = strconv.Atoi(m[2])
	total, _ = strconv.Atoi(m[3])
	return m[1], part, total, true
}

// PartName is the name of part of total of the split model prefix (see
// Split): PartName("name", 2, 5) is "name-00002-of-00005.gguf".
func PartName(prefix string, part, total int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, part, total)
}

// IsGGUF reports whether a file name or path ends in .gguf, in any case.
func IsGGUF(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".gguf") }

// IsProjector reports whether a file name (the last element of a path)
// is one of the multimodal projectors llama.cpp ships as mmproj-*.gguf: a
// GGUF file, but not a model.
func IsProjector(file string) bool { return strings.HasPrefix(strings.ToLower(file), "mmproj") }
