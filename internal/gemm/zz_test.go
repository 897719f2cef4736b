package gemm

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// static split over 2 spinning goroutines, columns halves, Serial each
func BenchmarkZZStatic(b *testing.B) {
	for _, s := range benchShapes[1:6] {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands()
			a32, b32, c32 := f32(a), f32(bb), f32(c)
			var gen, done atomic.Int64
			var stop atomic.Bool
			half := (s.n / 2 + 15) / 16 * 16
			if s.m > s.n {
				half = (s.m/2 + 5) / 6 * 6
			}
			part := func(p int) {
				if s.m <= s.n {
					lo, hi := p*half, min(s.n, (p+1)*half)
					bo := lo
					if s.tb {
						bo = lo * ldb
					}
					Serial(s.ta, s.tb, s.m, hi-lo, s.k, 1, a32, lda, b32[bo:], ldb, 0, c32[lo:], s.n)
				} else {
					lo, hi := p*half, min(s.m, (p+1)*half)
					ao := lo * lda
					if s.ta {
						ao = lo
					}
					Serial(s.ta, s.tb, hi-lo, s.n, s.k, 1, a32[ao:], lda, b32, ldb, 0, c32[lo*s.n:], s.n)
				}
			}
			go func() {
				seen := int64(0)
				for !stop.Load() {
					if g := gen.Load(); g != seen {
						seen = g
						part(1)
						done.Add(1)
					} else {
						runtime.Gosched()
					}
				}
			}()
			for i := 0; b.Loop(); i++ {
				gen.Add(1)
				part(0)
				for done.Load() != int64(i+1) {
				}
			}
			stop.Store(true)
			reportGFLOPS(b, s)
		})
	}
}
