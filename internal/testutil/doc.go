// Package testutil holds the small helpers that tests of several packages
// had each written for themselves: running a body on many goroutines at
// once, starting the test binary again as a child process to kill, and
// deterministic token ids to feed a model, a tiny Qwen3 that thinks.
//
// It is for tests only; nothing outside a _test.go file imports it.
package testutil
