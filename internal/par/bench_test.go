package par

import (
	"fmt"
	"testing"
)

// scaleJob scales x by k: the body of an element-wise kernel.
type scaleJob struct {
	x []float32
	k float32
}

func (s *scaleJob) Range(_, lo, hi int) { scale(s.x[lo:hi], s.k) }

func scale(x []float32, k float32) {
	for i := range x {
		x[i] *= k
	}
}

// BenchmarkElementsStart is the cost of an element-wise loop through the
// closure form (Elements, whose closure over x and k is allocated at each
// call) and the job form (ElementsOf), below MinWork (on the caller) and
// above it (on the helpers).
func BenchmarkElementsStart(b *testing.B) {
	for _, n := range []int{16, 4 * MinWork} {
		x := make([]float32, n)
		k := float32(1)
		b.Run(fmt.Sprintf("n=%d/closure", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Elements(n, func(lo, hi int) { scale(x[lo:hi], k) })
			}
		})
		b.Run(fmt.Sprintf("n=%d/job", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ElementsOf(n, scaleJob{x, k})
			}
		})
	}
}
