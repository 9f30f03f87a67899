package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("cputime: the thread's CPU clock: " + err.Error())
	}
	return time.Duration(ts.Nano())
}
