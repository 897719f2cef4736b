package conv

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// Prepared weights give Forward's result bit for bit, at the batch they
// were prepared for and at others, on the Winograd, implicit-GEMM and
// row-matrix paths in both dtypes; the algorithms that read w as given
// prepare nothing.
func TestPreparedMatchesForward(t *testing.T) {
	cases := append(append([]convCase{}, winogradCases...),
		convCase{name: "grid_5x5_same", n: 2, c: 8, h: 12, w: 11, o: 9, kh: 5, kw: 5, a: attrs{Padding: padSame}},
		convCase{name: "rows_stride2", n: 3, c: 17, h: 9, w: 7, o: 9, kh: 3, kw: 2, a: attrs{Stride: [2]int{2, 2}, Pad: [4]int{1, 0, 0, 1}}},
	)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := geomOf(t, c)
			w := randn(uint64(100+i), c.o, c.c, c.kh, c.kw)
			b := randn(uint64(200+i), c.o)
			checkPrepared(t, g, f32(w).Float32s(), f32(b).Float32s(), uint64(300+i))
			checkPrepared(t, g, w.Float64s(), b.Float64s(), uint64(400+i))
		})
	}
	depthwise := convCase{name: "depthwise", n: 1, c: 4, h: 6, w: 6, o: 4, kh: 3, kw: 3, a: attrs{Groups: 4}}
	require.Nil(t, Prepare(geomOf(t, depthwise), make([]float32, 36)))
	one := convCase{name: "mnist_stem", n: 1, c: 1, h: 28, w: 28, o: 20, kh: 5, kw: 5}
	require.Nil(t, Prepare(geomOf(t, one), make([]float32, 500)))
}

func checkPrepared[T tensor.Float](t *testing.T, g Geom, w, b []T, seed uint64) {
	p := Prepare(g, w)
	require.NotNil(t, p)
	for _, n := range []int{g.N, 1, g.N + 2} {
		h := g
		h.N = n
		require.True(t, p.Fits(h))
		x := tensor.Data[T](castTo[T](randn(seed, n, g.C, g.H, g.W)))
		want, got := make([]T, n*g.Cout*g.OH*g.OW), make([]T, n*g.Cout*g.OH*g.OW)
		Forward(h, false, x, w, b, want)
		p.Forward(h, x, b, got)
		require.Equal(t, want, got, "batch %d", n)
	}
	other := g
	other.H++
	require.False(t, p.Fits(other))
	require.False(t, (*Prepared[T])(nil).Fits(g))
}

func castTo[T tensor.Float](x *tensor.Tensor) *tensor.Tensor {
	if _, ok := any(T(0)).(float32); ok {
		return f32(x)
	}
	return x
}
