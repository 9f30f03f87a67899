package session

import "testing"

// TestRemoteNames: which model names are remote (remote:CONN/MODEL), alone
// and among others.
func TestRemoteNames(t *testing.T) {
	for _, tc := range []struct {
		models []string
		any    bool
	}{
		{nil, false},
		{[]string{"/models/a.gguf", "b.gguf"}, false},
		{[]string{"/models/a.gguf", "remote:lab/qwen3.5-9b"}, true},
		{[]string{"remote:lab/"}, false},
		{[]string{"remote:/qwen"}, false},
		{[]string{"remote:lab"}, false},
	} {
		if got := AnyRemote(tc.models); got != tc.any {
			t.Errorf("AnyRemote(%q) = %v, want %v", tc.models, got, tc.any)
		}
	}
	if conn, model, ok := ParseRemote("remote:lab/org/model:q4"); !ok || conn != "lab" || model != "org/model:q4" {
		t.Errorf("ParseRemote: %q %q %v", conn, model, ok)
	}
}
