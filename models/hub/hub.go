package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/churon/churon/internal/httpfile"
)

// DefaultBaseURL is the public hub.
const DefaultBaseURL = "https://huggingface.co"

// Errors; the UI picks its message with errors.Is.
var (
	ErrNotFound     = errors.New("hub: not found")
	ErrUnauthorized = errors.New("hub: access denied (the repository may be gated or private: set an access token)")
	ErrRateLimited  = errors.New("hub: rate limited, try again later")
	ErrBadRepo      = errors.New("hub: a repository is named owner/name")
)

// Options configure a Client.
type Options struct {
	BaseURL string       // default DefaultBaseURL
	Token   string       // optional access token; sent to BaseURL's host only
	HTTP    *http.Client // default: a client with a 30 s timeout (API calls are small)
}

// Client talks to one hub. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New makes a client. An unparsable BaseURL falls back to the default.
func New(opt Options) *Client {
	if opt.BaseURL == "" {
		opt.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(opt.BaseURL, "/"))
	if err != nil || u.Host == "" {
		u, _ = url.Parse(DefaultBaseURL)
	}
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: u, token: opt.Token, http: opt.HTTP}
}

// BaseURL returns the hub's address.
func (c *Client) BaseURL() string { return c.base.String() }

// Authorize adds the token to a request bound for the hub's own host (and
// to nothing else), for use as download.Options.Authorize.
func (c *Client) Authorize(req *http.Request) {
	if c.token != "" && req.URL.Host == c.base.Host {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// Model is one search result.
type Model struct {
	ID           string    `json:"id"`
	Downloads    int64     `json:"downloads"`
	Likes        int64     `json:"likes"`
	Tags         []string  `json:"tags,omitempty"`
	Pipeline     string    `json:"pipeline_tag,omitempty"`
	Gated        bool      `json:"gated"`
	Private      bool      `json:"private"`
	LastModified time.Time `json:"lastModified,omitzero"`
}

// apiModel is the API's shape: "gated" is false or "auto"/"manual".
type apiModel struct {
	ID           string          `json:"id"`
	ModelID      string          `json:"modelId"`
	Downloads    int64           `json:"downloads"`
	Likes        int64           `json:"likes"`
	Tags         []string        `json:"tags"`
	Pipeline     string          `json:"pipeline_tag"`
	Gated        json.RawMessage `json:"gated"`
	Private      bool            `json:"private"`
	LastModified string          `json:"lastModified"`
	CreatedAt    string          `json:"createdAt"`
}

// SearchOptions shape a search.
type SearchOptions struct {
	Sort  string // "downloads" (default), "likes", "trendingScore", "lastModified"
	Limit int    // default 30, at most 100
}

// Search finds models with GGUF files matching query, most downloaded
// first.
func (c *Client) Search(ctx context.Context, query string, opt SearchOptions) ([]Model, error) {
	if opt.Sort == "" {
		opt.Sort = "downloads"
	}
	if opt.Limit <= 0 {
		opt.Limit = 30
	}
	opt.Limit = min(opt.Limit, 100)
	q := url.Values{}
	if query = strings.TrimSpace(query); query != "" {
		q.Set("search", query)
	}
	q.Set("filter", "gguf")
	q.Set("sort", opt.Sort)
	q.Set("direction", "-1")
	q.Set("limit", strconv.Itoa(opt.Limit))
	var raw []apiModel
	if _, err := c.getJSON(ctx, c.endpoint("api/models")+"?"+q.Encode(), &raw); err != nil {
		return nil, fmt.Errorf("hub: search %q: %w", query, err)
	}
	out := make([]Model, 0, len(raw))
	for _, m := range raw {
		id := m.ID
		if id == "" {
			id = m.ModelID
		}
		if id == "" {
			continue
		}
		mm := Model{ID: id, Downloads: m.Downloads, Likes: m.Likes, Tags: m.Tags, Pipeline: m.Pipeline, Private: m.Private}
		g := strings.TrimSpace(string(m.Gated))
		mm.Gated = g != "" && g != "false" && g != "null"
		for _, s := range []string{m.LastModified, m.CreatedAt} {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				mm.LastModified = t
				break
			}
		}
		out = append(out, mm)
	}
	return out, nil
}

// File is one file of a repository.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // LFS digest (hex) when the file is in LFS
}

type apiEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	LFS  *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// maxPages bounds the pagination of a file listing.
const maxPages = 50

// Files lists a repository's files at a revision ("" means main), with the
// folders walked, sorted by path.
func (c *Client) Files(ctx context.Context, repo, revision string) ([]File, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if revision == "" {
		revision = "main"
	}
	next := c.endpoint("api/models/"+repo+"/tree/"+revision) + "?recursive=true"
	var out []File
	for page := 0; next != "" && page < maxPages; page++ {
		var entries []apiEntry
		h, err := c.getJSON(ctx, next, &entries)
		if err != nil {
			return nil, fmt.Errorf("hub: list %s@%s: %w", repo, revision, err)
		}
		for _, e := range entries {
			if e.Type != "file" {
				continue
			}
			f := File{Path: e.Path, Size: e.Size}
			if e.LFS != nil {
				f.SHA256 = strings.ToLower(strings.TrimPrefix(e.LFS.OID, "sha256:"))
				if e.LFS.Size > 0 {
					f.Size = e.LFS.Size
				}
			}
			out = append(out, f)
		}
		next = nextLink(h.Get("Link"))
		if next != "" {
			// Follow the hub's own pages only: a Link elsewhere would carry
			// the token away.
			if u, err := url.Parse(next); err != nil || (u.Host != "" && u.Host != c.base.Host) {
				next = ""
			} else {
				next = c.base.ResolveReference(u).String()
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ResolveURL is the download address of a file.
func (c *Client) ResolveURL(repo, revision, path string) string {
	if revision == "" {
		revision = "main"
	}
	return c.endpoint(repo + "/resolve/" + revision + "/" + path)
}

func checkRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || strings.Contains(repo, "..") {
		return fmt.Errorf("%w: %q", ErrBadRepo, repo)
	}
	return nil
}

// endpoint joins an unescaped path to the base URL (URL.String escapes it).
func (c *Client) endpoint(p string) string {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + "/" + p
	return u.String()
}

// getJSON fetches and decodes a JSON answer, returning its headers.
func (c *Client) getJSON(ctx context.Context, u string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", httpfile.UserAgent)
	c.Authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, httpfile.Cause(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, ErrUnauthorized
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, ErrRateLimited
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	// Listings of big repositories are a few MB at most.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v); err != nil {
		return nil, fmt.Errorf("bad answer: %w", err)
	}
	return resp.Header, nil
}

var linkNext = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?next"?`)

func nextLink(h string) string {
	if m := linkNext.FindStringSubmatch(h); m != nil {
		return m[1]
	}
	return ""
}
