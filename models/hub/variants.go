package hub

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/churon/churon/internal/ggufname"
)

// Variant is one downloadable model in a repository: a GGUF file, or the
// parts of a split one, with its quantization.
type Variant struct {
	Name  string // file name without the split suffix and ".gguf"
	Quant string // e.g. "Q4_K_M", "" when the name does not say
	Files []File // one file, or the parts in order
	Size  int64  // all parts together
	// Complete is false when a split model misses parts.
	Complete bool
}

// Split reports whether the variant is in several parts.
func (v Variant) Split() bool { return len(v.Files) > 1 }

var quantRE = regexp.MustCompile(`(?i)(?:^|[-_.])((?:IQ[1-4]_(?:XXS|XS|S|M|NL))|(?:Q[2-8]_K(?:_(?:XL|S|M|L))?)|(?:Q[4-8]_[01])|(?:TQ[12]_0)|(?:MXFP4(?:_MOE)?)|BF16|F16|F32|FP16|FP32)(?:$|[-_.])`)

// ParseQuant returns the quantization named in a GGUF file name, upper
// case, or "".
func ParseQuant(name string) string {
	base := strings.TrimSuffix(path.Base(name), ".gguf")
	if prefix, _, _, split := ggufname.Split(path.Base(name)); split {
		base = prefix
	}
	// The last match wins: "Q8_0-f16-Q4_K_M" names the weights last.
	var q string
	for s := base; ; {
		loc := quantRE.FindStringSubmatchIndex(s)
		if loc == nil {
			break
		}
		q = strings.ToUpper(s[loc[2]:loc[3]])
		s = s[loc[3]:]
	}
	switch q {
	case "FP16":
		q = "F16"
	case "FP32":
		q = "F32"
	}
	return q
}

// IsGGUF reports whether a path names a GGUF file.
func IsGGUF(p string) bool { return ggufname.IsGGUF(p) }

// Variants groups a repository's GGUF files into models, joining split
// parts and skipping other files (and the multimodal projectors that
// llama.cpp ships as mmproj-*.gguf). The result is sorted by size.
func Variants(files []File) []Variant {
	type group struct {
		v     Variant
		total int
		parts map[int]File
	}
	groups := map[string]*group{}
	var order []string
	for _, f := range files {
		if !IsGGUF(f.Path) || ggufname.IsProjector(path.Base(f.Path)) {
			continue
		}
		key, idx, total := f.Path, 1, 1
		name := strings.TrimSuffix(path.Base(f.Path), ".gguf")
		if prefix, part, n, split := ggufname.Split(f.Path); split {
			idx, total = part, n
			name = path.Base(prefix)
			key = prefix + "/" + strconv.Itoa(n) // parts of one model name the same total
		}
		g := groups[key]
		if g == nil {
			g = &group{v: Variant{Name: name, Quant: ParseQuant(f.Path)}, total: total, parts: map[int]File{}}
			groups[key] = g
			order = append(order, key)
		}
		g.parts[idx] = f
	}
	out := make([]Variant, 0, len(order))
	for _, k := range order {
		g := groups[k]
		g.v.Complete = true
		for i := 1; i <= g.total; i++ {
			f, ok := g.parts[i]
			if !ok {
				g.v.Complete = false
				continue
			}
			g.v.Files = append(g.v.Files, f)
			g.v.Size += f.Size
		}
		out = append(out, g.v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Size < out[j].Size })
	return out
}

// Pick finds the variant a person asked for by file name (a part's name
// selects its whole model) or by quantization (case-insensitive); with
// neither it returns the recommended default: Q4_K_M, else the smallest
// variant of at least 4 bits.
func Pick(vs []Variant, want string) (Variant, bool) {
	if want != "" {
		for _, v := range vs {
			for _, f := range v.Files {
				if f.Path == want || path.Base(f.Path) == want {
					return v, true
				}
			}
		}
		for _, v := range vs {
			if v.Quant != "" && strings.EqualFold(v.Quant, want) {
				return v, true
			}
		}
		return Variant{}, false
	}
	for _, pref := range []string{"Q4_K_M", "Q4_K_S", "Q4_0", "Q5_K_M", "Q8_0"} {
		for _, v := range vs {
			if v.Quant == pref && v.Complete {
				return v, true
			}
		}
	}
	for _, v := range vs {
		if v.Complete {
			return v, true
		}
	}
	return Variant{}, false
}
