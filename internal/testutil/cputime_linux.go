package testutil

import (
	"time"

	"golang.org/x/sys/unix"
)

func threadNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("testutil: the thread's CPU clock: " + err.Error())
	}
	return time.Duration(ts.Nano())
}
