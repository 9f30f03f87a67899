package cpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/churon/churon/internal/hugemem"
	"sync"
	"time"
)

// ReadBandwidth measures how fast this machine streams memory into the
// cores: threads goroutines each read their share of a buffer of size
// bytes (make it far larger than the caches, e.g. 1 GiB), reps times; it
// returns the best rate in bytes per second. Decoding reads every weight
// once per token, so this is the ceiling on tokens/s × weight bytes.
func ReadBandwidth(ctx context.Context, size int64, threads, reps int) (float64, error) {
	if size < 1<<20 || threads < 1 || reps < 1 {
		return 0, fmt.Errorf("cpu: bandwidth: need at least 1 MiB, 1 thread and 1 repetition")
	}
	size &^= 1<<16 - 1
	// The same kind of memory as weights read into memory (huge pages).
	buf, release := hugemem.Alloc(int(size))
	if release != nil {
		defer release()
	}
	// Touch every page first so the timing sees reads, not page faults.
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i >> 12)
	}
	share := (len(buf) / threads) &^ 255
	best := 0.0
	var sink uint64
	sums := make([]uint64, threads)
	for range reps {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var wg sync.WaitGroup
		start := time.Now()
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[t] = readSum(buf[t*share : (t+1)*share])
			}()
		}
		wg.Wait()
		el := time.Since(start).Seconds()
		for _, s := range sums {
			sink += s
		}
		if rate := float64(share*threads) / el; rate > best {
			best = rate
		}
	}
	if sink == 1 {
		// Never true in practice; keeps the sums observable.
		best++
	}
	return best, nil
}

// readSum adds b (a multiple of 256 bytes long) as little-endian uint64s.
func readSum(b []byte) uint64 {
	if useAsm && len(b) >= 256 {
		return readSumAsm(&b[0], len(b)&^255)
	}
	return readSumGeneric(b)
}

func readSumGeneric(b []byte) uint64 {
	var s0, s1, s2, s3 uint64
	for len(b) >= 32 {
		s0 += binary.LittleEndian.Uint64(b)
		s1 += binary.LittleEndian.Uint64(b[8:])
		s2 += binary.LittleEndian.Uint64(b[16:])
		s3 += binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	return s0 + s1 + s2 + s3
}
