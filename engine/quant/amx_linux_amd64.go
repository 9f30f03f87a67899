//go:build amd64 && !noasm && linux

package quant

import "syscall"

// requestAMX asks Linux (5.16 and later) for leave to use AMX tile data,
// which it grants a process only on request because the tiles add 8 KiB
// to every saved thread state.
func requestAMX() error {
	const (
		archReqXcompPerm = 0x1023
		xfeatureTileData = 18
	)
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); e != 0 {
		return e
	}
	return nil
}
