package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/churon/churon/app/api/openai"
	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
)

// handler serves one run of the server (one Config).
type handler struct {
	s     *Server
	cfg   Config
	slots chan struct{} // requests in flight, at most MaxConnections
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e := h.guard(w, r); e != nil {
		writeError(w, e)
		return
	}
	if r.Method == http.MethodOptions { // a CORS preflight guard let through
		w.WriteHeader(http.StatusNoContent)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	var route func(http.ResponseWriter, *http.Request)
	method := http.MethodPost
	switch path {
	case "/v1/models", "/models":
		route, method = h.models, http.MethodGet
	case "/v1/chat/completions", "/chat/completions":
		route = func(w http.ResponseWriter, r *http.Request) { h.answer(w, r, decodeChat) }
	case "/v1/completions", "/completions":
		route = func(w http.ResponseWriter, r *http.Request) { h.answer(w, r, decodeCompletion) }
	default:
		if m, ok := strings.CutPrefix(path, "/v1/models/"); ok && m != "" {
			route, method = func(w http.ResponseWriter, r *http.Request) { h.model(w, r, m) }, http.MethodGet
			break
		}
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeNotFound, Code: "unknown_url",
			Message: "no such endpoint: " + r.Method + " " + r.URL.Path + " (this server has GET /v1/models, POST /v1/chat/completions, POST /v1/completions)"})
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: typeInvalid,
			Message: r.URL.Path + " takes " + method + ", not " + r.Method})
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		writeError(w, &apiError{Status: http.StatusTooManyRequests, Type: typeRate, Code: "too_many_requests",
			Message: "too many requests in flight; try again shortly"})
		return
	}
	route(w, r)
}

// guard answers for everything that is refused whatever the endpoint:
// a Host that is not this machine's (DNS rebinding), a browser origin
// not allowed, a missing or wrong key, a POST that is not JSON. It sets
// the CORS headers of an allowed origin.
func (h *handler) guard(w http.ResponseWriter, r *http.Request) *apiError {
	if h.cfg.APIKey == "" && apiserve.IsLoopback(h.cfg.Addr) && !loopbackHost(r.Host) {
		return &apiError{Status: http.StatusForbidden, Type: typeInvalid, Code: "host_not_allowed",
			Message: "this server answers requests to localhost only, not to " + r.Host}
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !h.originAllowed(origin) {
			return &apiError{Status: http.StatusForbidden, Type: typeInvalid, Code: "origin_not_allowed",
				Message: "requests from the web page " + origin + " are not allowed (configure CORS origins to allow them)"}
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			w.Header().Set("Access-Control-Max-Age", "600")
			return nil // a preflight carries no key
		}
	}
	if key := h.cfg.APIKey; key != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(key)) != 1 {
			return &apiError{Status: http.StatusUnauthorized, Type: typeAuth, Code: "invalid_api_key",
				Message: "a valid API key is required: Authorization: Bearer KEY"}
		}
	}
	if r.Method == http.MethodPost {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/json" {
			return &apiError{Status: http.StatusUnsupportedMediaType, Type: typeInvalid,
				Message: "the request body must be JSON, sent with Content-Type: application/json"}
		}
	}
	return nil
}

func (h *handler) originAllowed(origin string) bool {
	for _, o := range h.cfg.CORSOrigins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// loopbackHost reports whether a request's Host names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// modelID is the loaded model's name in the API: its file name without
// .gguf ("" when none is loaded).
func (h *handler) modelID() (string, *session.ModelInfo) {
	st, err := h.s.opt.Session.Status()
	if err != nil || st.Model == nil {
		return "", nil
	}
	return strings.TrimSuffix(filepath.Base(st.Model.Path), ".gguf"), st.Model
}

func (h *handler) models(w http.ResponseWriter, _ *http.Request) {
	list := openai.ModelList{Object: "list", Data: []openai.Model{}}
	if id, _ := h.modelID(); id != "" {
		list.Data = append(list.Data, openai.Model{ID: id, Object: "model", Created: time.Now().Unix(), OwnedBy: "churon"})
	}
	writeJSON(w, http.StatusOK, list)
}

func (h *handler) model(w http.ResponseWriter, _ *http.Request, name string) {
	id, _ := h.modelID()
	if id == "" || !sameModel(name, id) {
		writeError(w, unknownModel(name, id))
		return
	}
	writeJSON(w, http.StatusOK, openai.Model{ID: id, Object: "model", Created: time.Now().Unix(), OwnedBy: "churon"})
}

func sameModel(asked, id string) bool {
	return strings.EqualFold(strings.TrimSuffix(asked, ".gguf"), id)
}

func unknownModel(asked, id string) *apiError {
	msg := "the model " + asked + " does not exist here"
	if id != "" {
		msg += "; the loaded model is " + id
	} else {
		msg += "; no model is loaded"
	}
	return &apiError{Status: http.StatusNotFound, Type: typeInvalid, Param: "model", Code: "model_not_found", Message: msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readBody reads a request's body within the size limit and the time
// allowed.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(readBodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	_ = rc.SetReadDeadline(time.Time{})
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalid,
			Message: "the request body is larger than this server allows (" + formatBytes(h.cfg.MaxBody) + ")"}
	case err != nil:
		return nil, badRequest("", "the request body could not be read: %v", err)
	}
	return body, nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// answer serves a chat or completion request: decoded, checked, handed
// to the session, and its answer written as it streams or as one object.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, decode func([]byte, limits) (call, *apiError)) {
	start := time.Now()
	entry := LogEntry{Time: start, Path: r.URL.Path, Client: r.RemoteAddr}
	id := newID("chatcmpl-")
	if !strings.Contains(r.URL.Path, "chat") {
		id = newID("cmpl-")
	}
	logged := h.cfg.Log
	finish := func(status int, errMsg string) {
		entry.Status, entry.Err, entry.Took, entry.ID = status, errMsg, time.Since(start), id
		h.s.end(id, entry, logged)
	}
	fail := func(e *apiError) {
		writeError(w, e)
		finish(e.Status, e.Message)
	}
	h.s.begin(RequestInfo{ID: id, Path: r.URL.Path, Client: r.RemoteAddr, Started: start})
	body, e := h.readBody(w, r)
	if e != nil {
		fail(e)
		return
	}
	lim := limits{messages: h.cfg.MaxMessages, maxTokens: h.cfg.MaxTokens, defaults: DefaultSampling()}
	if d := h.s.opt.Defaults; d != nil {
		lim.defaults = *d
	}
	c, e := decode(body, lim)
	if e != nil {
		fail(e)
		return
	}
	modelName, info := h.modelID()
	if info == nil {
		fail(sessionError(session.ErrNoModel))
		return
	}
	if c.model != "" && !sameModel(c.model, modelName) {
		fail(unknownModel(c.model, modelName))
		return
	}
	entry.Model = modelName
	c.req.Store = h.cfg.Store && c.chat
	c.req.Source = "api " + clientHost(r.RemoteAddr)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ans, err := h.s.opt.Session.Answer(ctx, c.req)
	if err != nil {
		fail(sessionError(err))
		return
	}
	// Whatever happens here, the answer's events are read to their end
	// (the session ends it soon after ctx is cancelled).
	defer func() {
		cancel()
		go func() {
			for range ans.Events {
			}
		}()
	}()
	out := &writer{w: w, rc: http.NewResponseController(w), c: c, id: id, model: modelName, created: start.Unix()}
	res := out.run(ctx, cancel, ans.Events, func(tokens int) { h.s.progress(id, tokens) })
	u := res.done.Usage
	entry.PromptTokens, entry.CachedTokens, entry.CompletionTokens = u.PromptTokens, u.CachedTokens, u.CompletionTokens
	entry.TTFT, entry.TokensPerSecond, entry.Finish = u.TTFT, u.GenTPS, string(res.done.Reason)
	errMsg := ""
	if res.err != nil {
		errMsg = res.err.Message
	}
	finish(res.status, errMsg)
}

// clientHost is the host of a client's address: the fair queue counts
// one machine's requests together.
func clientHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
