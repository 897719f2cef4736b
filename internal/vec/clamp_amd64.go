package vec

// clamp32 writes std::min(std::max(x, lo), hi) for n float32 values (n a
// multiple of 8).
//
//go:noescape
func clamp32(dst, x *float32, lo, hi float32, n int)
