//go:build unix

package ops

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per op since start ("cpu-ns/op", all cores
// together) to b's results: on a machine shared with other work the wall
// time of a parallel kernel swings with the load, its CPU time much less.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
