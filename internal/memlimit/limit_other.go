//go:build !linux

package memlimit

// capAddressSpace does nothing here: only Linux's RLIMIT_AS is used; the
// Go runtime's soft limit (debug.SetMemoryLimit) still applies.
func capAddressSpace(int64) error { return nil }
