package units

import "testing"

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {1 << 62, "4.0 EiB"}, {-2048, "-2.0 KiB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "?"}, {-1, "?"}, {999, "999"}, {292_800, "293K"}, {1_500_000, "2M"},
		{494_000_000, "494M"}, {1_540_000_000, "1.5B"}, {7_240_000_000, "7.2B"},
	} {
		if got := Params(tc.n); got != tc.want {
			t.Errorf("Params(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
