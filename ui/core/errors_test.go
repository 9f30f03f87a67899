package core

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/models"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/ui/locale"
)

// TestDescribe: each error the window shows becomes a headline in the
// UI's language from its type, with the technical chain kept for Details
// and never in the headline.
func TestDescribe(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:9/api/models", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	engineErr := errors.New("gguf: tensor \"blk.3.ffn_up.weight\": truncated: data runs past the end of the file")
	cases := []struct {
		name   string
		err    error
		en, ko string // in the headline
	}{
		{"offline", fmt.Errorf("hub: list: %w", refused), "you seem to be offline", "오프라인"},
		{"incomplete", fmt.Errorf("load model: %w", &session.LoadError{Path: "/m/qwen.gguf", Kind: session.LoadIncomplete, Have: 412 << 20, Want: 470 << 20, Err: engineErr}),
			"incomplete (412.0 MiB of 470.0 MiB)", "412.0 MiB / 470.0 MiB"},
		{"not a model", &session.LoadError{Path: "/m/notes.gguf", Kind: session.LoadNotModel, Err: errors.New("gguf: not a GGUF file")}, "not a model", "모델 파일이 아닙니다"},
		{"unsupported", &session.LoadError{Path: "/m/m.gguf", Kind: session.LoadUnsupported, Arch: "mamba", Supported: []string{"llama", "qwen2"}, Err: errors.New("arch: unknown architecture \"mamba\"")},
			"“mamba” model, which Churon cannot run yet. Churon runs llama, qwen2", "mamba"},
		{"out of memory", &session.LoadError{Path: "/m/big.gguf", Kind: session.LoadOutOfMemory, Err: syscall.ENOMEM}, "not enough memory", "메모리"},
		{"damaged download", fmt.Errorf("download: %w", download.ErrChecksum), "damaged", "손상"},
		{"missing file", &models.MissingFileError{Repo: "a/b", File: "c.gguf"}, "a/b no longer has c.gguf", "c.gguf"},
		// A file error's errno satisfies net.Error: it must not read as
		// offline.
		{"moved model", fmt.Errorf("session: load model: %w", &fs.PathError{Op: "open", Path: "/m/qwen-Q4_K_M.gguf", Err: syscall.ENOENT}), "moved or deleted", "옮겨졌거나"},
		{"no permission", &fs.PathError{Op: "open", Path: "/m/x.gguf", Err: syscall.EACCES}, "not allowed", "권한"},
	}
	for _, lang := range []string{"en", "ko"} {
		if _, err := locale.Set(lang); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(lang+"/"+tc.name, func(t *testing.T) {
				head, details := Describe(tc.err)
				want := tc.en
				if lang == "ko" {
					want = tc.ko
				}
				if !strings.Contains(head, want) {
					t.Errorf("headline %q lacks %q", head, want)
				}
				if details != tc.err.Error() {
					t.Errorf("details %q, want the whole chain %q", details, tc.err.Error())
				}
				if strings.Contains(head, "gguf:") || strings.Contains(head, "dial") {
					t.Errorf("the technical chain is in the headline: %q", head)
				}
			})
		}
	}
	_, _ = locale.Set("en")
	// What the UI does not know keeps its own words, with nothing behind.
	if head, details := Describe(errors.New("something odd")); head != "something odd" || details != "" {
		t.Errorf("an unknown error: %q, %q", head, details)
	}
}

// TestListStatus: the line over a list says the failure first, then that
// it is empty, and only then the rest.
func TestListStatus(t *testing.T) {
	failed := func(err error) string { return "failed: " + err.Error() }
	for _, c := range []struct {
		err  error
		n    int
		want string
	}{
		{errors.New("disk"), 0, "failed: disk"},
		{errors.New("disk"), 3, "failed: disk"},
		{nil, 0, "none"},
		{nil, 3, "three"},
	} {
		if got := ListStatus(c.err, failed, c.n, "none", "three"); got != c.want {
			t.Errorf("ListStatus(%v, %d) = %q, want %q", c.err, c.n, got, c.want)
		}
	}
}
