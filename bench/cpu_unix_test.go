//go:build unix

package bench

import "syscall"

// cpuSeconds is the CPU time (user + system, all threads) this process has
// used: on a machine shared with other work, samples per CPU-second vary
// far less with the load than samples per wall-clock second.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
