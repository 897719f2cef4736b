package vec

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// act32Tol is the error allowed to the float32 sigmoid and tanh against
// float64 math: three float32 ulps relative to the value, or 2^-24 absolute
// near 0 where tanh's result is tiny but 1 - 2/(e+1) rounds at 1's ulp.
const act32Tol = 3.6e-7

// act32Cases are the float32 activations against their float64 definitions.
var act32Cases = []struct {
	name   string
	scalar func(float32) float32
	slice  func(y, x []float32)
	want   func(float64) float64
}{
	{"sigmoid", Sigmoid32, sigmoid32, Sigmoid64},
	{"tanh", Tanh32, tanh32, math.Tanh},
}

func TestAct32MatchesFloat64(t *testing.T) {
	for _, tc := range act32Cases {
		t.Run(tc.name, func(t *testing.T) {
			var xs []float32
			for x := float32(-30); x <= 30; x += 0.00731 {
				xs = append(xs, x)
			}
			for x := float32(-1e-3); x <= 1e-3; x += 3.3e-6 { // near 0, and the tanh switch point
				xs = append(xs, x, x+tanhSmall, x-tanhSmall)
			}
			ys := make([]float32, len(xs))
			tc.slice(ys, xs)
			for i, x := range xs {
				want := tc.want(float64(x))
				tol := max(act32Tol*math.Abs(want), 6e-8)
				require.InDelta(t, want, float64(tc.scalar(x)), tol, "scalar %s(%v)", tc.name, x)
				require.InDelta(t, want, float64(ys[i]), tol, "vector %s(%v)", tc.name, x)
			}
		})
	}
}

// TestAct32Special checks the values at the ends of the range, ±0, ±Inf
// and NaN, in the vector kernel (all eight lanes) and in the scalar tail
// (lengths that are not multiples of 8).
func TestAct32Special(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		x    []float32
		sig  []float32
		tanh []float32
	}{
		{"zeros", []float32{0, float32(math.Copysign(0, -1))}, []float32{0.5, 0.5}, []float32{0, float32(math.Copysign(0, -1))}},
		{"infinities", []float32{inf, -inf}, []float32{1, 0}, []float32{1, -1}},
		{"saturated", []float32{100, -100, 1e30, -1e30}, []float32{1, 3.7200760e-44, 1, 0}, []float32{1, -1, 1, -1}},
	} {
		for _, n := range []int{len(tc.x), 8 + len(tc.x)} { // scalar only, then eight vector lanes first
			x := make([]float32, n)
			copy(x[n-len(tc.x):], tc.x)
			copy(x, tc.x)
			for _, f := range []struct {
				fn   func(y, x []float32)
				want []float32
				tol  float64
			}{{sigmoid32, tc.sig, 1e-38}, {tanh32, tc.tanh, 0}} {
				y := make([]float32, n)
				f.fn(y, x)
				for i, w := range f.want {
					require.InDelta(t, w, y[i], f.tol, "%s, n %d, x %v", tc.name, n, x[i])
					require.InDelta(t, w, y[n-len(tc.x)+i], f.tol, "%s, n %d, x %v (tail)", tc.name, n, x[i])
					require.Equal(t, math.Signbit(float64(w)), math.Signbit(float64(y[i])), "%s sign, x %v", tc.name, x[i])
				}
			}
		}
	}
	for _, n := range []int{3, 16} {
		x := make([]float32, n)
		for i := range x {
			x[i] = nan
		}
		for _, fn := range []func(y, x []float32){sigmoid32, tanh32} {
			y := make([]float32, n)
			fn(y, x)
			for _, v := range y {
				require.True(t, math.IsNaN(float64(v)))
			}
		}
	}
}

// TestAct32VectorMatchesScalar: the AVX2 kernels compute what the scalar
// functions compute, to one float32 ulp (the scalar FMA emulation rounds
// twice in rare cases).
func TestAct32VectorMatchesScalar(t *testing.T) {
	x := normal32(7, 4099)
	for i := range x {
		x[i] *= 6
	}
	for _, tc := range act32Cases {
		y := make([]float32, len(x))
		tc.slice(y, x)
		for i, v := range x {
			s := tc.scalar(v)
			require.InDelta(t, s, y[i], 1.2e-7*math.Abs(float64(s))+1e-45, "%s(%v)", tc.name, v)
		}
	}
}

// BenchmarkAct32 times the float32 activations over 64K elements against
// the float64 math functions they replace.
func BenchmarkAct32(b *testing.B) {
	x := normal32(3, 1<<16)
	y := make([]float32, len(x))
	for _, tc := range act32Cases {
		b.Run(tc.name+"/float32", func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				tc.slice(y, x)
			}
		})
		b.Run(tc.name+"/float64_math", func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				for i, v := range x {
					y[i] = float32(tc.want(float64(v)))
				}
			}
		})
	}
}
