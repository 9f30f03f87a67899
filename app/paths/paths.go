package paths

import (
	"os"
	"path/filepath"

	"github.com/adrg/xdg"
)

// EnvHome names the environment variable that puts every Churon file under
// one folder.
const EnvHome = "CHURON_HOME"

// DatabaseFile is the chat database's file name inside DataDir.
const DatabaseFile = "churon.db"

// Home returns $CHURON_HOME as an absolute path, or "" when it is unset.
func Home() string {
	h := os.Getenv(EnvHome)
	if h == "" {
		return ""
	}
	if abs, err := filepath.Abs(h); err == nil {
		return abs
	}
	return h
}

// DataDir holds the chat database (and, by default, downloaded models).
func DataDir() string { return dir("data", xdg.DataHome) }

// ConfigDir holds settings.
func ConfigDir() string { return dir("config", xdg.ConfigHome) }

// CacheDir holds what can be rebuilt: KV snapshots, partial downloads.
func CacheDir() string { return dir("cache", xdg.CacheHome) }

// KVCacheDir holds KV cache snapshots, one file per conversation
// (package app/kvcache).
func KVCacheDir() string { return filepath.Join(CacheDir(), "kv") }

// Database is the chat database's path.
func Database() string { return filepath.Join(DataDir(), DatabaseFile) }

func dir(sub, xdgBase string) string {
	if h := Home(); h != "" {
		return filepath.Join(h, sub)
	}
	return filepath.Join(xdgBase, "churon")
}
