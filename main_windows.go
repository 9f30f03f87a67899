package main

import (
	"os"
	"syscall"
)

// The Windows build is a GUI-subsystem program, so it starts without a
// console and a headless command (`churon --version`, `churon generate …`)
// run from cmd.exe or PowerShell would print nothing. With arguments,
// attach to the console of the shell that started us and write there.
func init() {
	if len(os.Args) < 2 {
		return
	}
	const attachParentProcess = uintptr(^uint32(0)) // ATTACH_PARENT_PROCESS, (DWORD)-1
	attach := syscall.NewLazyDLL("kernel32.dll").NewProc("AttachConsole")
	if ok, _, _ := attach.Call(attachParentProcess); ok == 0 {
		return // started from Explorer, or output is already redirected
	}
	// Streams the shell redirected (churon generate … > out.txt) already
	// have handles: keep those, fill in only the missing ones.
	if f, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0); err == nil {
		if missing(os.Stdout) {
			os.Stdout = f
		}
		if missing(os.Stderr) {
			os.Stderr = f
		}
	}
	if missing(os.Stdin) {
		if f, err := os.OpenFile("CONIN$", os.O_RDONLY, 0); err == nil {
			os.Stdin = f
		}
	}
}

func missing(f *os.File) bool {
	return f == nil || f.Fd() == 0 || f.Fd() == uintptr(syscall.InvalidHandle)
}
