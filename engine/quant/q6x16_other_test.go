//go:build !amd64 || noasm

package quant

import "testing"

// forQ6X16Variants runs f: there are no kernel variants on this build.
func forQ6X16Variants(t *testing.T, _ string, f func(t *testing.T)) { f(t) }
