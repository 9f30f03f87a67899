package cpu

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"sync"
)

var (
	physOnce sync.Once
	physN    int
)

// DefaultThreads is the thread count a backend uses when none is given:
// the number of physical cores, since two hyperthreads of one core share
// its vector units and gain nothing on these kernels. Where the core count
// cannot be read it is the number of logical CPUs, and it never exceeds
// the CPUs this process may use.
func DefaultThreads() int {
	physOnce.Do(func() {
		physN = physicalCores()
		if n := runtime.NumCPU(); physN <= 0 || physN > n {
			physN = n
		}
	})
	return physN
}

// physicalCores counts distinct (package, core) pairs in /proc/cpuinfo on
// Linux; elsewhere it returns 0 (unknown).
func physicalCores() int {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	type core struct{ pkg, id string }
	seen := map[core]bool{}
	var cur core
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			cur = core{}
		case "physical id":
			cur.pkg = strings.TrimSpace(v)
		case "core id":
			cur.id = strings.TrimSpace(v)
			seen[cur] = true
		}
	}
	if sc.Err() != nil {
		return 0
	}
	return len(seen)
}
