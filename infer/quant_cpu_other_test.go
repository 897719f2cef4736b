//go:build !unix

package infer_test

// cpuTime is not measured off unix.
func cpuTime() int64 { return 0 }
