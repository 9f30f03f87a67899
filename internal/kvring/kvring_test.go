package kvring

import "testing"

func TestRows(t *testing.T) {
	for _, c := range []struct{ window, context, want int }{
		{0, 4096, 0},       // no window
		{1024, 4096, 1536}, // Gemma 3 4B: 1023 + 512 is 24 blocks of 64
		{1024, 32768, 1536},
		{1024, 1536, 0}, // no shorter than the context: a row per position
		{1024, 1537, 1536},
		{512, 32768, 1024}, // Gemma 3 1B
		{128, 4096, 640},   // gpt-oss
		{5, 2048, 576},
		{1, 2048, 512},
	} {
		got := Rows(c.window, c.context)
		if got != c.want {
			t.Errorf("Rows(%d, %d) = %d, want %d", c.window, c.context, got, c.want)
		}
		if got > 0 && (got%align != 0 || got-c.window+1 < Margin) {
			t.Errorf("Rows(%d, %d) = %d: not whole blocks, or less than the margin past the window", c.window, c.context, got)
		}
	}
}
