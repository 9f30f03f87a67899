// Package remote is Churon's side of models served elsewhere: the
// connections a person adds (a name, a base URL, an optional API key, an
// optional list of models), what an endpoint serves (GET /v1/models), a
// check of it (Test: reachability, latency, models, streaming, logprobs)
// and the engine that answers a conversation on one of its models
// (Engine, which app/session runs behind the same commands and events as
// a local model).
//
//	conns := remote.Open(remote.DefaultPath(), remote.SystemKeyring())
//	c, err := conns.Add(remote.Connection{Name: "lab", BaseURL: "http://10.0.0.5:8080"}, key, false)
//	m := session.New(st, session.Options{Remote: conns})
//	m.LoadModel(session.RemotePath("lab", "Qwen3-32B"))
//
// # Where the API key lives
//
// In the operating system's keyring when one answers — the Secret
// Service (GNOME Keyring, KWallet) over D-Bus on Linux, the Keychain on
// macOS, the Credential Manager on Windows, through
// github.com/zalando/go-keyring — under the service "churon" and the
// connection's name. Without one (no D-Bus session, a headless machine,
// CHURON_KEYRING=off) the key is kept in the connections file itself
// ($CHURON_HOME/config/remotes.json, else the XDG config folder's
// churon/remotes.json),
// which is written with permissions 0600, and Connection.KeyWhere says so,
// for the Settings page and `churon remote list` to show. The key is
// never logged, never in an export or an error, and never sent anywhere
// but the connection's own host (redirects to another host are not
// followed).
//
// Connections is safe for concurrent use; it reads the file at every
// call, so the window and `churon remote` in a terminal see each other's
// changes. Nothing here imports the engine: the window uses it directly.
package remote
