package conv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// preparedCases add to rowsCases, depthwiseCases and winogradCases the
// kernel sizes and layers of the exported CNNs: ResNet's 7×7 stride-2
// stem, 5×5 and 1×1 layers, grouped ones and a Winograd layer at a
// second image size.
var preparedCases = []convCase{
	{"stem_7x7_stride2", 2, 3, 23, 21, 16, 7, 7, attrs{Stride: [2]int{2, 2}, Pad: [4]int{3, 3, 3, 3}}},
	{"5x5_same", 3, 8, 13, 11, 24, 5, 5, attrs{Padding: padSame}},
	{"1x1_wide", 2, 32, 7, 7, 48, 1, 1, attrs{}},
	{"grouped_3x3", 2, 12, 9, 10, 18, 3, 3, attrs{Groups: 3, Pad: [4]int{1, 1, 1, 1}}},
	{"grouped_dilated", 1, 8, 11, 9, 4, 3, 3, attrs{Groups: 2, Dilation: [2]int{2, 2}, Stride: [2]int{1, 2}}},
	{"winograd_odd_sizes", 3, 16, 9, 13, 24, 3, 3, attrs{Pad: [4]int{1, 1, 1, 1}}},
}

// forwardBoth runs Forward and ForwardPrepared (through p) on x, w and b
// and requires the same bits.
func forwardBoth[T tensor.Float](t *testing.T, g Geom, p *Prepared[T], x, w, b []T) {
	t.Helper()
	n := g.N * g.Cout * g.OH * g.OW
	want, got := make([]T, n), make([]T, n)
	Forward(g, false, x, w, b, want)
	ForwardPrepared(g, p, x, w, b, got)
	require.Equal(t, want, got)
}

// TestPreparedMatchesForward checks that the forward pass through
// prepared weights gives Forward's results bit for bit in float64 and
// float32, with and without a bias, on every kernel family (Winograd,
// implicit GEMM and row matrix on packed weights, depthwise, im2col), and
// that one preparation serves another batch and image size (which may
// switch between the implicit GEMM and the row matrix).
func TestPreparedMatchesForward(t *testing.T) {
	all := append(append(append(append([]convCase{}, rowsCases...), depthwiseCases...), winogradCases...), preparedCases...)
	for i, c := range all {
		t.Run(c.name, func(t *testing.T) {
			g := geomOf(t, c)
			x := randn(uint64(2000+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(2100+i), c.o, c.c/g.Groups, c.kh, c.kw)
			b := randn(uint64(2200+i), c.o)
			// a larger batch and image through the same preparation
			c2 := c
			c2.n, c2.h, c2.w = c.n+1, c.h+3, c.w+2
			g2 := geomOf(t, c2)
			x2 := randn(uint64(2300+i), c2.n, c2.c, c2.h, c2.w)
			t.Run("float64", func(t *testing.T) {
				p := Prepare(g, w.Float64s())
				forwardBoth(t, g, p, x.Float64s(), w.Float64s(), b.Float64s())
				forwardBoth(t, g, p, x.Float64s(), w.Float64s(), nil)
				forwardBoth(t, g2, p, x2.Float64s(), w.Float64s(), b.Float64s())
			})
			t.Run("float32", func(t *testing.T) {
				w32 := f32(w).Float32s()
				p := Prepare(g, w32)
				require.Equal(t, g.rowsPay() && winogradPays[float32](g.Geom, g.Cout), p.wino != nil, "Winograd prepared")
				require.Equal(t, g.rowsPay() && !g.pointwiseFilter() && p.wino == nil, p.rows != nil, "channels-last weights prepared (pointwise filters read as they lie)")
				require.Equal(t, p.rows != nil, p.pk != nil, "their GEMM packings with them")
				forwardBoth(t, g, p, f32(x).Float32s(), w32, f32(b).Float32s())
				forwardBoth(t, g, p, f32(x).Float32s(), w32, nil)
				forwardBoth(t, g2, p, f32(x2).Float32s(), w32, f32(b).Float32s())
			})
		})
	}
}

// Weights other than the prepared ones, or a geometry with another
// filter shape or stride, run as Forward on the weights given.
func TestPreparedFallsBack(t *testing.T) {
	c := winogradCases[0]
	g := geomOf(t, c)
	w := f32(randn(1, c.o, c.c, c.kh, c.kw)).Float32s()
	other := f32(randn(2, c.o, c.c, c.kh, c.kw)).Float32s()
	x := f32(randn(3, c.n, c.c, c.h, c.w)).Float32s()
	p := Prepare(g, w)
	require.NotNil(t, p.wino)
	forwardBoth(t, g, p, x, other, nil)
	want := make([]float32, g.N*g.Cout*g.OH*g.OW)
	Forward(g, false, x, other, nil, want)
	got := make([]float32, len(want))
	ForwardPrepared(g, p, x, other, nil, got)
	require.Equal(t, want, got)

	strided := c
	strided.a.Stride = [2]int{2, 2}
	gs := geomOf(t, strided)
	forwardBoth(t, gs, p, x, w, nil)
	forwardBoth(t, g, nil, x, w, nil)
}

// Concurrent forward passes share one preparation (its packings are
// made at the first product, under a sync.Once) and each gets Forward's
// bits; run with -race.
func TestPreparedConcurrent(t *testing.T) {
	for _, c := range []convCase{winogradCases[0], preparedCases[2], rowsCases[8]} {
		t.Run(c.name, func(t *testing.T) {
			g := geomOf(t, c)
			w := f32(randn(4, c.o, c.c, c.kh, c.kw)).Float32s()
			p := Prepare(g, w)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for k := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x := f32(randn(uint64(10+k), c.n, c.c, c.h, c.w)).Float32s()
					want, got := make([]float32, g.N*g.Cout*g.OH*g.OW), make([]float32, g.N*g.Cout*g.OH*g.OW)
					Forward(g, false, x, w, nil, want)
					ForwardPrepared(g, p, x, w, nil, got)
					for j := range want {
						if want[j] != got[j] {
							errs[k] = fmt.Errorf("goroutine %d: y[%d] = %v, want %v", k, j, got[j], want[j])
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
		})
	}
}
