//go:build unix

package infer_test

import (
	"syscall"
	"testing"
)

// cpuNanos returns the CPU time (user + system, all threads) this process
// has used, in nanoseconds.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU adds the CPU time per op since start (cpu-ns/op) to b's
// results: on a machine shared with other work a call's wall time swings
// with the load, its CPU time much less (at one thread; at more, the
// helpers' spinning counts too).
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuNanos()-start)/float64(b.N), "cpu-ns/op")
}
