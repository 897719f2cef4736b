//go:build !amd64

package vec

func clamp32(dst, x *float32, lo, hi float32, n int) { panic("vec: no assembly on this architecture") }
