//go:build !amd64 || noasm

package quant

import "testing"

// There are no kernel variants on this build: f runs once.

func forQ4X16Variants(t *testing.T, _ string, f func(t *testing.T)) { f(t) }

func forQ6X16Variants(t *testing.T, _ string, f func(t *testing.T)) { f(t) }
