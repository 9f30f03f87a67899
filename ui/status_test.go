package ui

import (
	"strings"
	"testing"

	apiserve "github.com/churon/churon/app/api/serve"
)

// TestServerText: the status line says the API server is on and where,
// how many requests it answers, why it is off after a failure, and
// nothing when it is simply off.
func TestServerText(t *testing.T) {
	for _, c := range []struct {
		st   apiserve.Status
		want string
	}{
		{apiserve.Status{}, ""},
		{apiserve.Status{On: true, URL: "http://127.0.0.1:8080/v1"}, "API http://127.0.0.1:8080/v1"},
		{apiserve.Status{On: true, URL: "http://127.0.0.1:8080/v1", Active: make([]apiserve.RequestInfo, 2)}, "answering 2"},
		{apiserve.Status{Err: "address already in use"}, "API off: address already in use"},
	} {
		got := serverText(c.st)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}
