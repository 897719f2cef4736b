package im2col

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Col2Im is the adjoint of Im2Col: <Im2Col(x), c> == <x, Col2Im(c)>, and
// Im2Col reads x[c, oh·SH−PT+i·DH, ow·SW−PL+j·DW] or 0 in the padding.
func TestIm2ColEntriesAndAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range []Geom{
		{C: 2, H: 5, W: 6, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 5, OW: 6},
		{C: 3, H: 7, W: 5, KH: 2, KW: 3, SH: 2, SW: 3, DH: 2, DW: 1, PT: 0, PL: 2, OH: 3, OW: 2},
		{C: 1, H: 4, W: 9, KH: 1, KW: 4, SH: 3, SW: 2, DH: 1, DW: 3, PT: 0, PL: 5, OH: 2, OW: 6},
	} {
		x := make([]float64, g.C*g.H*g.W)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		col := make([]float64, g.Rows()*g.Cols())
		for i := range col {
			col[i] = 99 // Im2Col must overwrite every entry
		}
		Im2Col(g, x, col)
		for c := 0; c < g.C; c++ {
			for i := 0; i < g.KH; i++ {
				for j := 0; j < g.KW; j++ {
					for oh := 0; oh < g.OH; oh++ {
						for ow := 0; ow < g.OW; ow++ {
							ih, iw := oh*g.SH-g.PT+i*g.DH, ow*g.SW-g.PL+j*g.DW
							want := 0.0
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
								want = x[(c*g.H+ih)*g.W+iw]
							}
							require.Equal(t, want, col[((c*g.KH+i)*g.KW+j)*g.Cols()+oh*g.OW+ow])
						}
					}
				}
			}
		}
		c := make([]float64, len(col))
		for i := range c {
			c[i] = rng.NormFloat64()
		}
		back := make([]float64, len(x))
		Col2Im(g, c, back)
		lhs, rhs := 0.0, 0.0
		for i := range col {
			lhs += col[i] * c[i]
		}
		for i := range x {
			rhs += x[i] * back[i]
		}
		require.InDelta(t, lhs, rhs, 1e-10)
	}
}
