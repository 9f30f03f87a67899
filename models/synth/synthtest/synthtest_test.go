package synthtest

import (
	"os"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestPathOncePerKey: one key is written once and gives one path, another
// key another file; Remove deletes them and a later Path writes afresh.
func TestPathOncePerKey(t *testing.T) {
	a := Path(t, "a", synth.Tiny("llama"))
	info, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if again := Path(t, "a", synth.Tiny("qwen2")); again != a {
		t.Fatalf("second Path of one key: %s, want %s", again, a)
	}
	if now, err := os.Stat(a); err != nil || !now.ModTime().Equal(info.ModTime()) || now.Size() != info.Size() {
		t.Fatalf("the file of key a was written again (%v)", err)
	}
	b := Path(t, "b", synth.Tiny("qwen2"))
	if b == a {
		t.Fatal("two keys share one file")
	}
	Remove()
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("after Remove, %s: %v", a, err)
	}
	if c := Path(t, "a", synth.Tiny("llama")); c == a {
		t.Fatal("Path after Remove returned the removed file")
	} else if _, err := os.Stat(c); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) { Main(m) }
