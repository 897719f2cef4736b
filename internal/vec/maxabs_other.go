//go:build !amd64

package vec

func maxAbs32(x *float32, n int) float32 { panic("vec: no assembly on this architecture") }
