package fit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SystemMemory reads /proc/meminfo.
func SystemMemory() (Memory, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return Memory{}, fmt.Errorf("fit: %w", err)
	}
	return parseMeminfo(data)
}

func parseMeminfo(data []byte) (Memory, error) {
	var m Memory
	var free, cached, buffers int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		switch key {
		case "MemTotal":
			m.Total = v
		case "MemAvailable":
			m.Available = v
		case "MemFree":
			free = v
		case "Cached":
			cached = v
		case "Buffers":
			buffers = v
		}
	}
	if m.Total <= 0 {
		return Memory{}, fmt.Errorf("fit: /proc/meminfo has no MemTotal")
	}
	if m.Available <= 0 { // kernels before 3.14
		m.Available = free + cached + buffers
	}
	return m, nil
}
