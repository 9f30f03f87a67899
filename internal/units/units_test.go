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

// TestParams: model-card counts, and the precise ones of churon info.
func TestParams(t *testing.T) {
	for _, tc := range []struct {
		precise bool
		n       int64
		want    string
	}{
		{false, 0, "?"}, {false, -1, "?"}, {false, 999, "999"}, {false, 292_800, "293K"}, {false, 1_500_000, "2M"},
		{false, 494_000_000, "494M"}, {false, 1_540_000_000, "1.5B"}, {false, 7_240_000_000, "7.2B"},
		{true, 0, "0"}, {true, 999, "999"}, {true, 292_800, "292.8K"}, {true, 1_500_000, "1.5M"},
		{true, 494_000_000, "494.0M"}, {true, 7_240_000_000, "7.24B"},
	} {
		f, name := Params, "Params"
		if tc.precise {
			f, name = ParamsPrecise, "ParamsPrecise"
		}
		if got := f(tc.n); got != tc.want {
			t.Errorf("%s(%d) = %q, want %q", name, tc.n, got, tc.want)
		}
	}
}
