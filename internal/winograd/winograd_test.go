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
type shape struct{ tiles, c int }

var shapes = []shape{{1, 8}, {3, 16}, {7, 24}, {2, 64}, {5, 3}, {4, 1}}

// onPaths runs fn on every shape, on the vector transforms (where they
// run) and on the Go ones.
func onPaths(t *testing.T, fn func(t *testing.T, s shape)) {
	for _, s := range shapes {
		for _, vector := range []bool{true, false} {
			if vector && !hasAVX {
				continue
			}
			t.Run(fmt.Sprintf("tiles%d_c%d_vector%v", s.tiles, s.c, vector), func(t *testing.T) {
				defer func(v bool) { hasAVX = v }(hasAVX)
				hasAVX = vector
				fn(t, s)
			})
		}
	}
}

// TestFilterTransforms checks Filter and FilterAdjoint against the
// matrix products G·w·Gᵀ and Gᵀ·u·G written out.
func TestFilterTransforms(t *testing.T) {
	g := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		var w [9]float64
		var u [16]float64
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		var wantU [16]float64
		var wantW [9]float64
		for a := range 4 {
			for b := range 4 {
				for i := range 3 {
					for j := range 3 {
						wantU[4*a+b] += g[a][i] * w[3*i+j] * g[b][j]
						wantW[3*i+j] += g[a][i] * u[4*a+b] * g[b][j]
					}
				}
			}
		}
		gotU, gotW := Filter(w), FilterAdjoint(u)
		for i := range wantU {
			assert.InDelta(t, wantU[i], gotU[i], 1e-14, "Filter[%d]", i)
		}
		for i := range wantW {
			assert.InDelta(t, wantW[i], gotW[i], 1e-14, "FilterAdjoint[%d]", i)
		}
	}
}

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

			dmWant, dmGot := make([]float32, 16*vs), make([]float32, 16*vs)
			outputAdjointGo(s.tiles, yGot, ys, s.c, dmWant, vs)
			OutputAdjoint(s.tiles, yGot, ys, s.c, dmGot, vs)
			require.Equal(t, dmWant, dmGot, "OutputAdjoint")
		})
	}
}

// TestTileConvolution checks the whole algorithm on a row of tiles: c
// input channels to k outputs through Filter, Input, the 16 products and
// Output, against the direct 3×3 cross-correlation summed in float64, on
// the vector path (where it runs) and the Go one.
func TestTileConvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	onPaths(t, func(t *testing.T, s shape) {
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

// TestTileFilterGradient checks the filter gradient on a row of tiles:
// c input channels, k outputs, dW = Gᵀ·(Σ_tiles V ⊙ dM)·G through Input,
// OutputAdjoint and FilterAdjoint, against the direct sum
// dW[o, ch, i, j] = Σ_{r, q} x[r+i, q+j, ch]·dy[r, q, o] in float64.
func TestTileFilterGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	onPaths(t, func(t *testing.T, s shape) {
		c, k, cols := s.c, s.c+8, 2*s.tiles+2
		x := randSlice(rng, 4*cols*c)
		dy := randSlice(rng, 2*2*s.tiles*k)
		vs, ms := s.tiles*c, s.tiles*k
		v, dm := make([]float32, 16*vs), make([]float32, 16*ms)
		Input(s.tiles, x, cols*c, c, v, vs)
		OutputAdjoint(s.tiles, dy, 2*s.tiles*k, k, dm, ms)
		for o := range k {
			for ch := range c {
				var u [16]float64
				for xi := range u {
					for tile := range s.tiles {
						u[xi] += float64(v[xi*vs+tile*c+ch]) * float64(dm[xi*ms+tile*k+o])
					}
				}
				got := FilterAdjoint(u)
				for i := range 3 {
					for j := range 3 {
						var want float64
						for r := range 2 {
							for q := range 2 * s.tiles {
								want += float64(x[(r+i)*cols*c+(q+j)*c+ch]) * float64(dy[r*2*s.tiles*k+q*k+o])
							}
						}
						assert.InDelta(t, want, got[3*i+j], 1e-5*(1+math.Abs(want))*float64(s.tiles), "out %d in %d tap %d,%d", o, ch, i, j)
					}
				}
			}
		}
	})
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
