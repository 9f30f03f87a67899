package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeHub speaks the shape of the hub's API (as of 2026: /api/models
// returns an array of {_id,id,likes,downloads,tags,pipeline_tag,gated,...};
// /tree/ returns {type,oid,size,path,lfs:{oid,size,pointerSize}} entries,
// paginated with a Link header).
func fakeHub(t *testing.T, token string) (*httptest.Server, *[]string) {
	t.Helper()
	var seenAuth []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/models", func(w http.ResponseWriter, r *http.Request) {
		seenAuth = append(seenAuth, r.Header.Get("Authorization"))
		q := r.URL.Query()
		if q.Get("filter") != "gguf" || q.Get("sort") != "downloads" || q.Get("limit") != "5" {
			http.Error(w, "bad query "+r.URL.RawQuery, 400)
			return
		}
		if q.Get("search") != "qwen" {
			fmt.Fprint(w, `[]`)
			return
		}
		fmt.Fprint(w, `[
 {"_id":"1","id":"Qwen/Qwen2.5-0.5B-Instruct-GGUF","likes":120,"downloads":90000,"private":false,"gated":false,"pipeline_tag":"text-generation","tags":["gguf","chat"],"createdAt":"2024-09-17T14:06:29.000Z","modelId":"Qwen/Qwen2.5-0.5B-Instruct-GGUF"},
 {"_id":"2","id":"someone/gated-qwen","likes":3,"downloads":10,"private":false,"gated":"manual","tags":["gguf"],"createdAt":"2025-01-01T00:00:00.000Z"}
]`)
	})
	mux.HandleFunc("GET /api/models/{owner}/{name}/tree/{rev}", func(w http.ResponseWriter, r *http.Request) {
		seenAuth = append(seenAuth, r.Header.Get("Authorization"))
		repo := r.PathValue("owner") + "/" + r.PathValue("name")
		if repo == "private/repo" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"error":"Access to model private/repo is restricted."}`, 401)
			return
		}
		if repo != "Qwen/Qwen2.5-0.5B-Instruct-GGUF" && repo != "private/repo" {
			http.Error(w, `{"error":"Repository not found"}`, 404)
			return
		}
		if r.URL.Query().Get("recursive") != "true" {
			http.Error(w, "not recursive", 400)
			return
		}
		if r.URL.Query().Get("cursor") == "" {
			w.Header().Set("Link", `</api/models/`+repo+`/tree/main?recursive=true&cursor=abc>; rel="next"`)
			fmt.Fprint(w, `[
 {"type":"file","oid":"a1","size":1519,"path":".gitattributes"},
 {"type":"file","oid":"b2","size":7300,"path":"README.md"},
 {"type":"directory","oid":"c3","size":0,"path":"big"},
 {"type":"file","oid":"d4","size":135,"path":"qwen2.5-0.5b-instruct-q4_k_m.gguf","lfs":{"oid":"`+strings.Repeat("ab", 32)+`","size":491400032,"pointerSize":135}},
 {"type":"file","oid":"e5","size":135,"path":"qwen2.5-0.5b-instruct-q8_0.gguf","lfs":{"oid":"`+strings.Repeat("cd", 32)+`","size":675710816,"pointerSize":135}}
]`)
			return
		}
		fmt.Fprint(w, `[
 {"type":"file","oid":"f6","size":134,"path":"big/qwen2.5-0.5b-instruct-fp16-00002-of-00002.gguf","lfs":{"oid":"`+strings.Repeat("ef", 32)+`","size":400000000,"pointerSize":134}},
 {"type":"file","oid":"f7","size":134,"path":"big/qwen2.5-0.5b-instruct-fp16-00001-of-00002.gguf","lfs":{"oid":"`+strings.Repeat("12", 32)+`","size":600000000,"pointerSize":134}},
 {"type":"file","oid":"f8","size":134,"path":"mmproj-model-f16.gguf","lfs":{"oid":"`+strings.Repeat("34", 32)+`","size":1000,"pointerSize":134}}
]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &seenAuth
}

func TestSearch(t *testing.T) {
	srv, _ := fakeHub(t, "")
	c := New(Options{BaseURL: srv.URL + "/"})
	ms, err := c.Search(context.Background(), " qwen ", SearchOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "Qwen/Qwen2.5-0.5B-Instruct-GGUF" || ms[0].Downloads != 90000 || ms[0].Likes != 120 ||
		ms[0].Gated || !ms[1].Gated || ms[0].LastModified.Year() != 2024 {
		t.Fatalf("%+v", ms)
	}
	if ms, err := c.Search(context.Background(), "nothing", SearchOptions{Limit: 5}); err != nil || len(ms) != 0 {
		t.Fatalf("%v %v", ms, err)
	}
}

func TestFilesAndVariants(t *testing.T) {
	srv, _ := fakeHub(t, "")
	c := New(Options{BaseURL: srv.URL})
	files, err := c.Files(context.Background(), "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 7 {
		t.Fatalf("%d files (both pages, folders skipped): %+v", len(files), files)
	}
	var q4 File
	for _, f := range files {
		if f.Path == "qwen2.5-0.5b-instruct-q4_k_m.gguf" {
			q4 = f
		}
	}
	if q4.Size != 491400032 || q4.SHA256 != strings.Repeat("ab", 32) {
		t.Fatalf("LFS size/hash not used: %+v", q4)
	}
	vs := Variants(files)
	if len(vs) != 3 {
		t.Fatalf("variants %+v", vs)
	}
	if vs[0].Quant != "Q4_K_M" || vs[1].Quant != "Q8_0" || vs[2].Quant != "F16" {
		t.Errorf("quants %q %q %q", vs[0].Quant, vs[1].Quant, vs[2].Quant)
	}
	split := vs[2]
	if !split.Split() || !split.Complete || split.Size != 1e9 || split.Name != "qwen2.5-0.5b-instruct-fp16" ||
		!strings.HasSuffix(split.Files[0].Path, "-00001-of-00002.gguf") {
		t.Errorf("split variant %+v", split)
	}
	if v, ok := Pick(vs, ""); !ok || v.Quant != "Q4_K_M" {
		t.Errorf("default pick %+v", v)
	}
	if v, ok := Pick(vs, "q8_0"); !ok || v.Quant != "Q8_0" {
		t.Errorf("pick q8_0 %+v", v)
	}
	if v, ok := Pick(vs, "qwen2.5-0.5b-instruct-fp16-00002-of-00002.gguf"); !ok || len(v.Files) != 2 {
		t.Errorf("pick by part %+v", v)
	}
	if _, ok := Pick(vs, "Q2_K"); ok {
		t.Error("picked a quant that is not there")
	}
	want := srv.URL + "/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/big/a%20b.gguf"
	if got := c.ResolveURL("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "", "big/a b.gguf"); got != want {
		t.Errorf("ResolveURL = %s; want %s", got, want)
	}
}

func TestIncompleteSplit(t *testing.T) {
	vs := Variants([]File{{Path: "m-Q4_K_M-00001-of-00003.gguf", Size: 1}, {Path: "m-Q4_K_M-00003-of-00003.gguf", Size: 1}})
	if len(vs) != 1 || vs[0].Complete || len(vs[0].Files) != 2 {
		t.Fatalf("%+v", vs)
	}
	if _, ok := Pick(vs, ""); ok {
		t.Error("picked an incomplete model")
	}
}

func TestTokenAndErrors(t *testing.T) {
	srv, seen := fakeHub(t, "hf_secret")
	ctx := context.Background()
	anon := New(Options{BaseURL: srv.URL})
	_, err := anon.Files(ctx, "private/repo", "main")
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v", err)
	}
	withTok := New(Options{BaseURL: srv.URL, Token: "hf_secret"})
	if _, err := withTok.Files(ctx, "private/repo", "main"); err != nil {
		t.Fatal(err)
	}
	if (*seen)[len(*seen)-1] != "Bearer hf_secret" {
		t.Errorf("token not sent: %q", *seen)
	}
	if _, err := withTok.Files(ctx, "nobody/nothing", "main"); !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "hf_secret") {
		t.Errorf("err = %v", err)
	}
	for _, bad := range []string{"noslash", "a/b/c", "/x", "a/../b"} {
		if _, err := withTok.Files(ctx, bad, ""); !errors.Is(err, ErrBadRepo) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// The token goes to the hub's host only.
	req, _ := http.NewRequest("GET", "https://cdn.example.com/file", nil)
	withTok.Authorize(req)
	if req.Header.Get("Authorization") != "" {
		t.Error("token sent to another host")
	}
}

func TestParseQuant(t *testing.T) {
	cases := map[string]string{
		"qwen2.5-0.5b-instruct-q4_k_m.gguf":         "Q4_K_M",
		"Llama-3.2-1B-Instruct-Q8_0.gguf":           "Q8_0",
		"gemma-2-2b-it-IQ4_XS.gguf":                 "IQ4_XS",
		"Phi-3.5-mini-instruct-f16.gguf":            "F16",
		"model-bf16-00001-of-00002.gguf":            "BF16",
		"SmolLM2-1.7B-Instruct-Q4_K_L.gguf":         "Q4_K_L",
		"Qwen3-8B-UD-Q4_K_XL.gguf":                  "Q4_K_XL",
		"tinyllama.gguf":                            "",
		"Meta-Llama-3.1-8B-Instruct.Q5_K_S.gguf":    "Q5_K_S",
		"dir/Mistral-7B-Instruct-v0.3.IQ2_XXS.gguf": "IQ2_XXS",
		"gpt-oss-20b-MXFP4.gguf":                    "MXFP4",
		"model-q4_0-00002-of-00005.gguf":            "Q4_0",
		"stories260K.gguf":                          "",
	}
	for name, want := range cases {
		if got := ParseQuant(name); got != want {
			t.Errorf("%s: %q; want %q", name, got, want)
		}
	}
}
