package compare

import (
	"encoding/json"
	"fmt"
)

// Decode reads a Result from its JSON form (as Save stores it and
// `churon compare --json` prints it).
func Decode(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("compare: decode: %w", err)
	}
	if r.Format < 1 || r.Format > FormatVersion {
		return nil, fmt.Errorf("compare: decode: format %d; this program reads 1 to %d", r.Format, FormatVersion)
	}
	if r.Reference < 0 || r.Reference >= len(r.Models) {
		return nil, fmt.Errorf("compare: decode: reference %d of %d models", r.Reference, len(r.Models))
	}
	return &r, nil
}
