package fit

import "testing"

// TestMeminfo reads /proc/meminfo's format: Linux only (mem_linux.go).
func TestMeminfo(t *testing.T) {
	m, err := parseMeminfo([]byte("MemTotal:       16301220 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nCached: 1 kB\n"))
	if err != nil || m.Total != 16301220*1024 || m.Available != 8000000*1024 {
		t.Fatalf("%+v %v", m, err)
	}
	old, err := parseMeminfo([]byte("MemTotal: 100 kB\nMemFree: 10 kB\nBuffers: 5 kB\nCached: 20 kB\n"))
	if err != nil || old.Available != 35*1024 {
		t.Fatalf("%+v %v", old, err)
	}
	if _, err := parseMeminfo([]byte("garbage")); err == nil {
		t.Error("no error for garbage")
	}
	if sys, err := SystemMemory(); err != nil || sys.Total <= 0 || sys.Available <= 0 {
		t.Errorf("SystemMemory: %+v %v", sys, err)
	}
}
