//go:build !unix

package main

import "time"

// processCPU is not available here: the load generator's CPU column
// stays empty.
func processCPU() (time.Duration, bool) { return 0, false }
