package ggufname

import "testing"

func TestSplit(t *testing.T) {
	cases := []struct {
		name        string
		prefix      string
		part, total int
		ok          bool
	}{
		{"name-00002-of-00005.gguf", "name", 2, 5, true},
		{"dir/Qwen-Q4_K_M-00001-of-00003.gguf", "dir/Qwen-Q4_K_M", 1, 3, true},
		{"name.gguf", "name.gguf", 0, 0, false},
		{"name-2-of-5.gguf", "name-2-of-5.gguf", 0, 0, false},
		{"name-00002-of-00005.GGUF", "name-00002-of-00005.GGUF", 0, 0, false},
		{"name-00002-of-00005.gguf.part", "name-00002-of-00005.gguf.part", 0, 0, false},
	}
	for _, c := range cases {
		prefix, part, total, ok := Split(c.name)
		if prefix != c.prefix || part != c.part || total != c.total || ok != c.ok {
			t.Errorf("Split(%q) = %q, %d, %d, %v; want %q, %d, %d, %v", c.name, prefix, part, total, ok, c.prefix, c.part, c.total, c.ok)
		}
		if ok && PartName(prefix, part, total) != c.name {
			t.Errorf("PartName(Split(%q)) = %q", c.name, PartName(prefix, part, total))
		}
	}
}

func TestKinds(t *testing.T) {
	cases := []struct {
		name            string
		gguf, projector bool
	}{
		{"model.gguf", true, false},
		{"MODEL.GGUF", true, false},
		{"mmproj-model-f16.gguf", true, true},
		{"MMPROJ-x.gguf", true, true},
		{"model.gguf.part", false, false},
		{"readme.md", false, false},
	}
	for _, c := range cases {
		if IsGGUF(c.name) != c.gguf || IsProjector(c.name) != c.projector {
			t.Errorf("%q: IsGGUF %v, IsProjector %v; want %v, %v", c.name, IsGGUF(c.name), IsProjector(c.name), c.gguf, c.projector)
		}
	}
}
