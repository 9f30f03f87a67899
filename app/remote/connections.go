package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/internal/atomicfile"
)

// Connection is an endpoint the person added, as front ends see it: no
// key, only whether there is one and where it is kept.
type Connection struct {
	// Name is how the person calls it: letters, digits, ".", "-" and "_"
	// (it is the CONN of "remote:CONN/MODEL").
	Name string `json:"name"`
	// BaseURL is normalised (openai.NormalizeBaseURL): ".../v1".
	BaseURL string `json:"base_url"`
	// Models are the person's list, or what the endpoint served when it
	// was last asked (Refresh); empty: ask it.
	Models []string `json:"models,omitempty"`
	// CACert is a PEM file of a certificate the person trusts for this
	// endpoint (a self-signed server's); "" trusts the system's.
	CACert string `json:"ca_cert,omitempty"`
	// HasKey says an API key is kept for it, and KeyWhere where: "the
	// system keyring", or the connections file (see the package doc).
	HasKey   bool   `json:"-"`
	KeyWhere string `json:"-"`
}

// record is a connection as the file keeps it.
type record struct {
	Connection
	// KeyInKeyring: the key is in the keyring under the name; Key: the
	// key itself, when no keyring was available.
	KeyInKeyring bool   `json:"key_in_keyring,omitempty"`
	Key          string `json:"key,omitempty"`
	// KeyringNote is why the key is in the file.
	KeyringNote string `json:"keyring_note,omitempty"`
}

type file struct {
	Version     int      `json:"version"`
	Connections []record `json:"connections"`
}

// FileName is the connections file's name in the config folder.
const FileName = "remotes.json"

// DefaultPath is where the connections are kept: $CHURON_HOME/config (or
// the XDG config folder)/remotes.json.
func DefaultPath() string { return filepath.Join(paths.ConfigDir(), FileName) }

// Errors.
var (
	ErrNotFound  = errors.New("remote: no such connection")
	ErrExists    = errors.New("remote: a connection of that name exists")
	ErrBadName   = errors.New("remote: a connection's name is letters, digits, '.', '-' and '_'")
	ErrNoModels  = errors.New("remote: the endpoint serves no models")
	ErrFileWorld = errors.New("remote: the connections file is readable by others")
)

// Connections are the endpoints the person added, kept in one file.
type Connections struct {
	path string
	ring Keyring
	mu   sync.Mutex
	// Timeouts of the clients made (0: openai's defaults).
	FirstByte, Stall time.Duration
}

// Open keeps connections in the file at path (made when the first is
// added), their keys in ring when it works (nil: in the file).
func Open(path string, ring Keyring) *Connections {
	return &Connections{path: path, ring: ring}
}

// Path is the connections file.
func (c *Connections) Path() string { return c.path }

func (c *Connections) read() (file, error) {
	b, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return file{Version: 1}, nil
	}
	if err != nil {
		return file{}, fmt.Errorf("remote: read %s: %w", c.path, err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return file{}, fmt.Errorf("remote: %s: %w", c.path, err)
	}
	return f, nil
}

func (c *Connections) write(f file) error {
	f.Version = 1
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	if err := atomicfile.WriteFile(c.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("remote: write %s: %w", c.path, err)
	}
	return nil
}

func (c *Connections) public(r record) Connection {
	conn := r.Connection
	conn.Models = slices.Clone(r.Models)
	switch {
	case r.KeyInKeyring:
		conn.HasKey, conn.KeyWhere = true, "the system keyring"
		if c.ring != nil {
			conn.KeyWhere = c.ring.Where()
		}
	case r.Key != "":
		conn.HasKey = true
		conn.KeyWhere = c.path + " (permissions 0600)"
		if r.KeyringNote != "" {
			conn.KeyWhere += ": " + r.KeyringNote
		}
	}
	return conn
}

// List returns the connections, in the order they were added.
func (c *Connections) List() ([]Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := c.read()
	if err != nil {
		return nil, err
	}
	out := make([]Connection, len(f.Connections))
	for i, r := range f.Connections {
		out[i] = c.public(r)
	}
	return out, nil
}

// Get returns the connection called name.
func (c *Connections) Get(name string) (Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, i, err := c.named(name)
	if err != nil {
		return Connection{}, err
	}
	return c.public(f.Connections[i]), nil
}

func find(f file, name string) int {
	return slices.IndexFunc(f.Connections, func(r record) bool { return r.Name == name })
}

// named reads the file and finds the connection called name in it, or
// fails with ErrNotFound. The caller holds c.mu.
func (c *Connections) named(name string) (file, int, error) {
	f, err := c.read()
	if err != nil {
		return f, -1, err
	}
	i := find(f, name)
	if i < 0 {
		return f, -1, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return f, i, nil
}

// ValidName reports whether name can name a connection.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Add adds a connection (replace: or replaces the one of its name) with
// key ("" for none), kept in the keyring when one works, else in the
// file; the returned connection says where.
func (c *Connections) Add(conn Connection, key string, replace bool) (Connection, error) {
	conn.Name = strings.TrimSpace(conn.Name)
	if !ValidName(conn.Name) {
		return Connection{}, fmt.Errorf("%w: %q", ErrBadName, conn.Name)
	}
	base, err := openai.NormalizeBaseURL(conn.BaseURL)
	if err != nil {
		return Connection{}, err
	}
	conn.BaseURL = base
	var models []string
	for _, m := range conn.Models {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	conn.Models = models
	key = strings.TrimSpace(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := c.read()
	if err != nil {
		return Connection{}, err
	}
	i := find(f, conn.Name)
	if i >= 0 && !replace {
		return Connection{}, fmt.Errorf("%w: %q (remove it first)", ErrExists, conn.Name)
	}
	r := record{Connection: conn}
	r.HasKey, r.KeyWhere = false, ""
	if key != "" {
		if c.ring == nil {
			r.Key, r.KeyringNote = key, "no keyring is used (CHURON_KEYRING=off)"
		} else if err := c.ring.Set(conn.Name, key); err != nil {
			r.Key, r.KeyringNote = key, "the system keyring is not available ("+firstLine(err)+")"
		} else {
			r.KeyInKeyring = true
		}
	} else if i >= 0 && f.Connections[i].KeyInKeyring && c.ring != nil {
		_ = c.ring.Delete(conn.Name)
	}
	if i >= 0 {
		f.Connections[i] = r
	} else {
		f.Connections = append(f.Connections, r)
	}
	if err := c.write(f); err != nil {
		return Connection{}, err
	}
	return c.public(r), nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// Remove deletes the connection and its key.
func (c *Connections) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, i, err := c.named(name)
	if err != nil {
		return err
	}
	if f.Connections[i].KeyInKeyring && c.ring != nil {
		if err := c.ring.Delete(name); err != nil {
			return fmt.Errorf("remote: delete the key of %q from %s: %w", name, c.ring.Where(), err)
		}
	}
	f.Connections = slices.Delete(f.Connections, i, i+1)
	return c.write(f)
}

// SetModels records the models of a connection (what Refresh found).
func (c *Connections) SetModels(name string, models []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, i, err := c.named(name)
	if err != nil {
		return err
	}
	f.Connections[i].Models = slices.Clone(models)
	return c.write(f)
}

// key returns the connection's record and its key.
func (c *Connections) key(name string) (record, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, i, err := c.named(name)
	if err != nil {
		return record{}, "", err
	}
	r := f.Connections[i]
	switch {
	case r.Key != "":
		return r, r.Key, nil
	case r.KeyInKeyring && c.ring != nil:
		k, err := c.ring.Get(name)
		if err != nil {
			return r, "", fmt.Errorf("remote: the key of %q in %s: %w", name, c.ring.Where(), err)
		}
		return r, k, nil
	case r.KeyInKeyring:
		return r, "", fmt.Errorf("remote: the key of %q is in the system keyring, which is switched off (CHURON_KEYRING)", name)
	}
	return r, "", nil
}
