//go:build unix

package infer_test

import "syscall"

// cpuTime is the CPU time in nanoseconds (user + system, all threads)
// this process has used.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
