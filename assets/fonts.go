package assets

import _ "embed"

// The Hangul faces Churon draws Korean with, whatever fonts the system
// has: Hangul subsets of NanumGothic (regular and bold) and of
// NanumGothicCoding (code), renamed and given the vertical metrics of the
// Latin font Fyne draws beside them. fonts/gen.py makes them from Debian's
// fonts-nanum and says why each change; fonts/OFL.txt is their licence.
var (
	//go:embed fonts/ChuronHangulSans-Regular.ttf
	HangulSansRegular []byte
	//go:embed fonts/ChuronHangulSans-Bold.ttf
	HangulSansBold []byte
	//go:embed fonts/ChuronHangulMono-Regular.ttf
	HangulMonoRegular []byte
)
