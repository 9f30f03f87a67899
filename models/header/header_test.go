package header

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/synth"
)

func synthModel(t *testing.T) string {
	t.Helper()
	s := synth.Tiny("llama")
	s.Embd, s.FF, s.Layers, s.Heads, s.KVHeads, s.Vocab, s.Context = 256, 512, 4, 8, 2, 1000, 4096
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := synth.Write(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

// rangeServer serves a file with Range support and counts body bytes.
func rangeServer(t *testing.T, path string, ranges bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		if !ranges {
			r.Header.Del("Range")
		}
		cw := &countingWriter{ResponseWriter: w, n: &sent}
		http.ServeContent(cw, r, "", time.Time{}, f)
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func TestRemoteEqualsLocal(t *testing.T) {
	path := synthModel(t)
	local, err := Local(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, sent := rangeServer(t, path, true)
	remote, stats, err := Remote(context.Background(), srv.URL+"/tiny.gguf?sig=secret", RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local.Name, remote.Name = "", "" // the file name is not in the header
	if local != remote {
		t.Fatalf("remote %+v\nlocal  %+v", remote, local)
	}
	// The handler counts a write once it returns, which can be after the
	// client has read it.
	for deadline := time.Now().Add(time.Minute); sent.Load() < stats.BytesFetched && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if stats.BytesFetched != sent.Load() || stats.FileSize != local.FileBytes {
		t.Errorf("stats %+v, server sent %d", stats, sent.Load())
	}
	// Only the header, plus at most one read-ahead chunk.
	if stats.BytesFetched < local.HeaderBytes || stats.BytesFetched > local.HeaderBytes+1<<20 || stats.BytesFetched >= local.FileBytes/4 {
		t.Errorf("fetched %d bytes for a %d-byte header of a %d-byte file", stats.BytesFetched, local.HeaderBytes, local.FileBytes)
	}
	if fit.EstimateMemory(remote, 2048) != fit.EstimateMemory(local, 2048) {
		t.Error("estimates differ")
	}
	t.Logf("header %d bytes of %d; fetched %d in %d requests", local.HeaderBytes, local.FileBytes, stats.BytesFetched, stats.Requests)
	if local.Architecture != "llama" || local.Layers != 4 || local.KVHeads != 2 || local.HeadDimK != 32 ||
		local.ContextLength != 4096 || !local.HasTemplate || local.Parameters == 0 || local.Quant != "F32" {
		t.Errorf("meta %+v", local)
	}
}

func TestRemoteWithoutRanges(t *testing.T) {
	path := synthModel(t)
	srv, _ := rangeServer(t, path, false)
	_, stats, err := Remote(context.Background(), srv.URL, RemoteOptions{})
	if !errors.Is(err, ErrNoRanges) {
		t.Fatalf("err = %v", err)
	}
	if stats.BytesFetched != 0 {
		t.Errorf("read %d bytes of a whole-file answer", stats.BytesFetched)
	}
}

// TestEstimateIsWhatTheEngineAllocates: for architectures with and
// without sliding windows, and a hybrid with recurrent layers (whose
// state counts as cache), the fit estimate's KV cache from a header is
// exactly what a sequence of the engine allocates (F16, the default), at
// contexts where the window layers keep rings and where they do not.
func TestEstimateIsWhatTheEngineAllocates(t *testing.T) {
	odd, _ := synth.Preset("gemma3-odd", "F16", 1)
	tiny, _ := synth.Preset("gemma3-tiny", "F16", 1) // the default pattern of 6
	oss := synth.Tiny("gpt-oss")
	q35, _ := synth.Preset("qwen35-odd", "F16", 1) // recurrent layers: state, not KV rows
	windowed := map[string]bool{"gemma3-odd": true, "gemma3-tiny": true, "gpt-oss": true}
	for name, s := range map[string]synth.Spec{"gemma3-odd": odd, "gemma3-tiny": tiny, "gpt-oss": oss, "llama": synth.Tiny("llama"), "qwen35-odd": q35} {
		t.Run(name, func(t *testing.T) {
			s.Context = 1 << 15
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := synth.Write(path, s); err != nil {
				t.Fatal(err)
			}
			meta, err := Local(path)
			if err != nil {
				t.Fatal(err)
			}
			if (meta.WindowLayers > 0) != windowed[name] || meta.WindowLayers >= meta.Layers {
				t.Fatalf("%d of %d layers with a window of %d", meta.WindowLayers, meta.Layers, meta.SlidingWindow)
			}
			if (meta.RecurrentLayers > 0) != (name == "qwen35-odd") || meta.RecurrentLayers >= meta.Layers || (meta.StateBytes > 0) != (meta.RecurrentLayers > 0) {
				t.Fatalf("%d of %d layers recurrent with %d bytes of state", meta.RecurrentLayers, meta.Layers, meta.StateBytes)
			}
			m, err := engine.Load(context.Background(), path, engine.LoadOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, n := range []int{256, 4096} {
				seq, err := m.NewSequence(engine.SequenceOptions{Context: n})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := fit.EstimateMemory(meta, n).KVCache, seq.KVBytes(); got != want {
					t.Errorf("at %d tokens: the estimate counts %d bytes of KV cache, the engine allocates %d", n, got, want)
				}
				seq.Close()
			}
		})
	}
}
