package remote

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// memRing is an in-memory keyring (fail: every Set fails, as a machine
// without a Secret Service does).
type memRing struct {
	keys map[string]string
	fail bool
}

func (r *memRing) Get(n string) (string, error) {
	k, ok := r.keys[n]
	if !ok {
		return "", ErrNoKey
	}
	return k, nil
}

func (r *memRing) Set(n, k string) error {
	if r.fail {
		return errors.New("The name org.freedesktop.secrets was not provided by any .service files")
	}
	r.keys[n] = k
	return nil
}

func (r *memRing) Delete(n string) error { delete(r.keys, n); return nil }
func (r *memRing) Where() string         { return "the test keyring" }

const key = "sk-connections-test-8c1e0b5a"

func TestConnections(t *testing.T) {
	for _, tt := range []struct {
		name      string
		ring      *memRing
		inFile    bool
		whereSays string
	}{
		{"keyring", &memRing{keys: map[string]string{}}, false, "the test keyring"},
		{"keyring fails", &memRing{keys: map[string]string{}, fail: true}, true, "keyring is not available"},
		{"no keyring", nil, true, "CHURON_KEYRING=off"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config", FileName)
			var ring Keyring
			if tt.ring != nil {
				ring = tt.ring
			}
			c := Open(path, ring)
			got, err := c.Add(Connection{Name: "lab", BaseURL: "http://127.0.0.1:8080/v1/", Models: []string{"a", " a", "b", ""}}, key, false)
			if err != nil {
				t.Fatal(err)
			}
			if got.BaseURL != "http://127.0.0.1:8080/v1" || strings.Join(got.Models, ",") != "a,b" || !got.HasKey {
				t.Fatalf("added %+v", got)
			}
			if !strings.Contains(got.KeyWhere, tt.whereSays) {
				t.Errorf("KeyWhere %q, want it to say %q", got.KeyWhere, tt.whereSays)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("the connections file has permissions %v, want 0600", st.Mode().Perm())
			}
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), key) != tt.inFile {
				t.Errorf("key in the file: %v, want %v", strings.Contains(string(b), key), tt.inFile)
			}
			if _, k, err := c.key("lab"); err != nil || k != key {
				t.Fatalf("the key read back: %q, %v", k, err)
			}
			if _, err := c.Add(Connection{Name: "lab", BaseURL: "x:1"}, "", false); !errors.Is(err, ErrExists) {
				t.Errorf("a second lab: %v, want ErrExists", err)
			}
			for _, bad := range []string{"", "a/b", "a b", "remote:x"} {
				if _, err := c.Add(Connection{Name: bad, BaseURL: "x:1"}, "", false); !errors.Is(err, ErrBadName) {
					t.Errorf("name %q: %v, want ErrBadName", bad, err)
				}
			}
			list, err := c.List()
			if err != nil || len(list) != 1 || list[0].Name != "lab" {
				t.Fatalf("list %+v, %v", list, err)
			}
			if err := c.Remove("lab"); err != nil {
				t.Fatal(err)
			}
			if tt.ring != nil && len(tt.ring.keys) != 0 {
				t.Errorf("the key stayed in the keyring after Remove")
			}
			if _, err := c.Get("lab"); !errors.Is(err, ErrNotFound) {
				t.Errorf("after Remove: %v, want ErrNotFound", err)
			}
			b, _ = os.ReadFile(path)
			if strings.Contains(string(b), key) {
				t.Error("the key stayed in the file after Remove")
			}
		})
	}
}

// TestNoSessionBus: without a D-Bus session (a headless Linux machine,
// CI) the system keyring is not tried; the key goes to the file, and
// the connection says why.
func TestNoSessionBus(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("their keyrings need no D-Bus")
	}
	t.Setenv("CHURON_KEYRING", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	c := Open(filepath.Join(t.TempDir(), FileName), SystemKeyring())
	got, err := c.Add(Connection{Name: "lab", BaseURL: "127.0.0.1:1"}, key, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.KeyWhere, "permissions 0600") || !strings.Contains(got.KeyWhere, "no D-Bus session") {
		t.Fatalf("KeyWhere %q", got.KeyWhere)
	}
}
