package im2col

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// rowGeoms covers padding on every side, strides above the kernel, dilation,
// odd sizes and negative (cropping) offsets.
var rowGeoms = []Geom{
	{C: 2, H: 5, W: 6, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 5, OW: 6},
	{C: 3, H: 7, W: 5, KH: 2, KW: 3, SH: 2, SW: 3, DH: 2, DW: 1, PT: 0, PL: 2, OH: 3, OW: 2},
	{C: 1, H: 4, W: 9, KH: 1, KW: 4, SH: 3, SW: 2, DH: 1, DW: 3, PT: 0, PL: 5, OH: 2, OW: 6},
	{C: 17, H: 3, W: 1, KH: 3, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 0, OH: 3, OW: 1},
	{C: 3, H: 13, W: 11, KH: 3, KW: 2, SH: 1, SW: 1, DH: 2, DW: 2, PT: -1, PL: -2, OH: 7, OW: 5},
	{C: 1, H: 1, W: 1, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, PT: 0, PL: 0, OH: 1, OW: 1},
	{C: 4, H: 10, W: 10, KH: 2, KW: 2, SH: 3, SW: 3, DH: 1, DW: 1, PT: 0, PL: 0, OH: 3, OW: 3},
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Im2Row(Pad(x)) holds x[c, oh·SH−PT+i·DH, ow·SW−PL+j·DW] (0 in the
// padding) at row oh·OW+ow, column (i·KW+j)·C+c; Unpad (adding) and Row2Im are the
// adjoints of Pad and Im2Row.
func TestIm2RowEntriesAndAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range rowGeoms {
		x := randVec(rng, g.C*g.H*g.W)
		xp := make([]float64, g.PaddedLen())
		for i := range xp {
			xp[i] = 99 // Pad must overwrite every entry
		}
		Pad(g, x, xp)
		rows := make([]float64, g.Cols()*g.Rows())
		for i := range rows {
			rows[i] = 99
		}
		Im2Row(g, xp, rows)
		for oh := 0; oh < g.OH; oh++ {
			for ow := 0; ow < g.OW; ow++ {
				for i := 0; i < g.KH; i++ {
					for j := 0; j < g.KW; j++ {
						for c := 0; c < g.C; c++ {
							ih, iw := oh*g.SH-g.PT+i*g.DH, ow*g.SW-g.PL+j*g.DW
							want := 0.0
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
								want = x[(c*g.H+ih)*g.W+iw]
							}
							require.Equal(t, want, rows[(oh*g.OW+ow)*g.Rows()+(i*g.KW+j)*g.C+c], "%+v", g)
						}
					}
				}
			}
		}

		r := randVec(rng, len(rows))
		back := make([]float64, len(xp))
		Row2Im(g, r, back)
		require.InDelta(t, dot(rows, r), dot(xp, back), 1e-10, "Row2Im %+v", g)

		p := randVec(rng, len(xp))
		bx := make([]float64, len(x))
		Unpad(g, p, bx, true)
		require.InDelta(t, dot(xp, p), dot(x, bx), 1e-10, "Unpad %+v", g)

		// Writing: Pad then Unpad gives back x's cells inside the window,
		// and leaves the rest.
		into := randVec(rng, len(x))
		want := append([]float64(nil), into...)
		r0, r1, s0, s1 := g.inside()
		for c := 0; c < g.C; c++ {
			for r := r0; r < r1; r++ {
				for s := s0; s < s1; s++ {
					i := (c*g.H+r-g.PT)*g.W + s - g.PL
					want[i] = x[i]
				}
			}
		}
		Unpad(g, xp, into, false)
		require.Equal(t, want, into, "Unpad write %+v", g)
	}
}

// Transpose writes or adds dst[j·ldd+i] = src[i·lds+j] on odd shapes and
// on shapes with whole 8×8 blocks (the AVX path for float32) plus ragged
// edges, with row strides past the rows' ends, and touches nothing else.
func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct{ r, c, lds, ldd int }{
		{1, 1, 1, 1}, {3, 17, 19, 4}, {17, 3, 3, 17}, {127, 5, 6, 130}, {4, 513, 513, 5}, {8, 1, 2, 9}, {0, 3, 3, 1},
		{8, 8, 8, 8}, {16, 32, 1024, 16}, {32, 16, 16, 1024}, {17, 127, 130, 19}, {513, 9, 9, 513}, {9, 33, 40, 11},
	} {
		for _, add := range []bool{false, true} {
			src := randVec(rng, max(1, s.r*s.lds))
			dst := randVec(rng, max(1, s.c*s.ldd))
			want := append([]float64(nil), dst...)
			for i := 0; i < s.r; i++ {
				for j := 0; j < s.c; j++ {
					if add {
						want[j*s.ldd+i] += src[i*s.lds+j]
					} else {
						want[j*s.ldd+i] = src[i*s.lds+j]
					}
				}
			}
			got := append([]float64(nil), dst...)
			Transpose(got, s.ldd, src, s.lds, s.r, s.c, add)
			require.Equal(t, want, got, "float64 %+v add %v", s, add)

			src32, got32, want32 := f32s(src), f32s(dst), f32s(dst)
			for i := 0; i < s.r; i++ {
				for j := 0; j < s.c; j++ {
					if add {
						want32[j*s.ldd+i] += src32[i*s.lds+j]
					} else {
						want32[j*s.ldd+i] = src32[i*s.lds+j]
					}
				}
			}
			Transpose(got32, s.ldd, src32, s.lds, s.r, s.c, add)
			require.Equal(t, want32, got32, "float32 %+v add %v", s, add)
		}
	}
}

func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
