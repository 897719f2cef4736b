//go:build !unix

package infer_test

import "testing"

// cpuNanos is not measured off unix.
func cpuNanos() int64 { return 0 }

// reportCPU reports nothing off unix.
func reportCPU(*testing.B, int64) {}
