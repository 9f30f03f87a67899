//go:build amd64 && !noasm && !linux

package quant

import "errors"

// requestAMX: only Linux is known to grant tile data here; elsewhere the
// tile kernels stay off.
func requestAMX() error { return errors.New("AMX not enabled on this system") }
