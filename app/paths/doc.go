// Package paths says where Churon keeps its files.
//
// By default they follow the XDG base directories (through
// github.com/adrg/xdg, which maps them to the usual places on macOS and
// Windows): the chat database under DataDir, settings under ConfigDir,
// KV snapshots and partial downloads under CacheDir, each a "churon"
// folder inside the XDG directory.
//
// $CHURON_HOME, when set, moves all three under one folder
// ($CHURON_HOME/data, $CHURON_HOME/config, $CHURON_HOME/cache), so tests,
// scripts and a portable install never touch a person's real history:
//
//	CHURON_HOME=$(mktemp -d) churon chat -m model.gguf --new --message hi
//
// The functions read the environment on every call and create nothing;
// callers make the folders when they write into them.
package paths
