package winograd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// shapes are tile counts and channel counts, with row and plane strides
// longer than the data they hold.
var shapes = []struct{ tiles, c int }{{1, 8}, {3, 16}, {7, 24}, {2, 64}, {5, 3}, {4, 1}}

// TestTransformsMatchGo checks the vector transforms against the plain Go
// ones, value for value: both add in the same order.
func TestTransformsMatchGo(t *testing.T) {
	if !hasAVX {
		t.Skip("no AVX: Input and Output run the Go transforms only")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes {
		if s.c%8 != 0 {
			continue
		}
		t.Run(fmt.Sprintf("tiles%d_c%d", s.tiles, s.c), func(t *testing.T) {
			rs := (2*s.tiles+2)*s.c + 5
			x := randSlice(rng, 4*rs)
			vs := s.tiles*s.c + 3
			want, got := make([]float32, 16*vs), make([]float32, 16*vs)
			inputGo(s.tiles, x, rs, s.c, want, vs)
			Input(s.tiles, x, rs, s.c, got, vs)
			require.Equal(t, want, got, "Input")

			b := randSlice(rng, s.c)
			ys := 2*s.tiles*s.c + 7
			yWant, yGot := make([]float32, 2*ys), make([]float32, 2*ys)
			outputGo(s.tiles, got, vs, s.c, b, yWant, ys)
			Output(s.tiles, got, vs, s.c, b, yGot, ys)
			require.Equal(t, yWant, yGot, "Output")
		})
	}
}

// TestTileConvolution checks the whole algorithm on a row of tiles: c
// input channels to k outputs through Filter, Input, the 16 products and
// Output, against the direct 3×3 cross-correlation summed in float64, on
// the vector path (where it runs) and the Go one.
func TestTileConvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range shapes {
		for _, vector := range []bool{true, false} {
			if vector && !hasAVX {
				continue
			}
			t.Run(fmt.Sprintf("tiles%d_c%d_vector%v", s.tiles, s.c, vector), func(t *testing.T) {
				defer func(v bool) { hasAVX = v }(hasAVX)
				hasAVX = vector
				c, k, cols := s.c, s.c+8, 2*s.tiles+2
				x := randSlice(rng, 4*cols*c) // 4 rows of cols pixels, channels last
				w := randSlice(rng, k*c*9)    // [k][c][3][3]
				b := randSlice(rng, k)
				vs := s.tiles * c
				v := make([]float32, 16*vs)
				Input(s.tiles, x, cols*c, c, v, vs)
				ms := s.tiles * k
				m := make([]float32, 16*ms)
				for o := range k {
					for ch := range c {
						var g [9]float64
						for i := range g {
							g[i] = float64(w[(o*c+ch)*9+i])
						}
						u := Filter(g)
						for xi, uv := range u {
							for tile := range s.tiles {
								m[xi*ms+tile*k+o] += float32(uv) * v[xi*vs+tile*c+ch]
							}
						}
					}
				}
				ys := 2 * s.tiles * k
				y := make([]float32, 2*ys)
				Output(s.tiles, m, ms, k, b, y, ys)
				for r := range 2 {
					for q := range 2 * s.tiles {
						for o := range k {
							want := float64(b[o])
							for ch := range c {
								for i := range 3 {
									for j := range 3 {
										want += float64(x[(r+i)*cols*c+(q+j)*c+ch]) * float64(w[(o*c+ch)*9+3*i+j])
									}
								}
							}
							got := float64(y[r*ys+q*k+o])
							assert.InDelta(t, want, got, 1e-5*(1+math.Abs(want))*float64(c), "row %d col %d out %d", r, q, o)
						}
					}
				}
			})
		}
	}
}

// BenchmarkTransforms times Input and Output over the tiles of one
// 32×32 image with 16 channels (ResNet-32's first stage).
func BenchmarkTransforms(b *testing.B) {
	const tiles, c = 16, 16
	rng := rand.New(rand.NewPCG(5, 6))
	rs := (2*tiles + 2) * c
	x := randSlice(rng, 4*rs)
	v := make([]float32, 16*tiles*c)
	bias := make([]float32, c)
	y := make([]float32, 2*2*tiles*c)
	for b.Loop() {
		for range tiles {
			Input(tiles, x, rs, c, v, tiles*c)
			Output(tiles, v, tiles*c, c, bias, y, 2*tiles*c)
		}
	}
}
