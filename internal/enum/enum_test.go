package enum

import "testing"

type color int8

const (
	red color = iota
	green
	blue
)

var colorNames = [...]string{red: "red", green: "green"}

func TestName(t *testing.T) {
	cases := []struct {
		v    color
		want string
	}{
		{red, "red"},
		{green, "green"},
		{blue, "color(2)"}, // a constant without a name
		{-1, "color(-1)"},
		{100, "color(100)"},
	}
	for _, c := range cases {
		if got := Name(c.v, "color", colorNames[:]); got != c.want {
			t.Errorf("Name(%d) = %q, want %q", c.v, got, c.want)
		}
	}
}
