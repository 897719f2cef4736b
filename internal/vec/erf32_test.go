package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// erf32MaxUlps is the bound held by the float32 erf and GELU, scalar and
// vector, against float64 math.Erf/math.Erfc over every result above
// 2^-122 (GELU below x = -12.9 rounds through subnormals and is held to
// 2^-126 absolute), in float32 ulps of the exact value (TestErf32Accuracy logs the measured
// maxima).
const erf32MaxUlps = 6

// erf32Cases are the float32 functions against their float64 definitions;
// GELU's is taken through math.Erfc so that its negative tail is exact
// relative to its value.
var erf32Cases = []struct {
	name   string
	scalar func(float32) float32
	slice  func(y, x []float32)
	want   func(float64) float64
}{
	{"erf", Erf32, Erf[float32], math.Erf},
	{"gelu", Gelu32, Gelu[float32], func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }},
}

// ulps32 is |got - want| in float32 ulps of want (whose ulp below the
// normal range is the smallest normal's).
func ulps32(got float32, want float64) float64 {
	e := math.Ilogb(max(math.Abs(want), 0x1p-126))
	return math.Abs(float64(got)-want) / math.Ldexp(1, e-23)
}

// erf32Sweep is every 401st float32 from 2^-40 to 16 and their negatives,
// every binade and the far tails included, plus 0.
func erf32Sweep() []float32 {
	xs := []float32{0}
	for b := math.Float32bits(0x1p-40); b <= math.Float32bits(16); b += 401 {
		x := math.Float32frombits(b)
		xs = append(xs, x, -x)
	}
	return xs
}

func TestErf32Accuracy(t *testing.T) {
	xs := erf32Sweep()
	ys := make([]float32, len(xs))
	for _, tc := range erf32Cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.slice(ys, xs)
			worst := map[string]float64{}
			var worstAt [2]float32
			for i, x := range xs {
				want := tc.want(float64(x))
				for k, got := range [2]float32{tc.scalar(x), ys[i]} {
					if math.Abs(want) < 0x1p-122 { // x < -12.9, where the product x·Φ(x) passes through subnormals: within the smallest normal
						require.LessOrEqual(t, math.Abs(float64(got)-want), 0x1p-126, "%s(%g)", tc.name, x)
						continue
					}
					u := ulps32(got, want)
					name := [2]string{"scalar", "vector"}[k]
					if u > worst[name] {
						worst[name], worstAt[k] = u, x
					}
					require.LessOrEqual(t, u, float64(erf32MaxUlps), "%s %s(%g) = %g, want %g", name, tc.name, x, got, want)
				}
			}
			t.Logf("%s over %d points: max %.2f ulps scalar (at %g), %.2f vector (at %g)",
				tc.name, len(xs), worst["scalar"], worstAt[0], worst["vector"], worstAt[1])
		})
	}
}

// TestGelu32Tail checks GELU's far negative side relative to its value,
// where x·Φ(x) is far below 1's ulp: 1 - erfc there would give 0 or noise.
func TestGelu32Tail(t *testing.T) {
	for _, x := range []float32{-3, -4.5, -6, -8.25, -10, -12, -13} {
		want := 0.5 * float64(x) * math.Erfc(-float64(x)/math.Sqrt2)
		got := Gelu32(x)
		require.Less(t, got, float32(0))
		require.LessOrEqual(t, ulps32(got, want), float64(erf32MaxUlps), "gelu(%g) = %g, want %g", x, got, want)
	}
	require.Equal(t, float32(0), Gelu32(-14)) // exp(-98) is below float32's normal range
}

// TestErf32VectorMatchesScalar runs the slice functions (the AVX2 kernels
// on the multiple-of-8 prefix) against the scalar ones on random and odd
// lengths, special values included; they differ only where a fused
// multiply-add rounds once where the scalar rounds twice.
func TestErf32VectorMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	special := []float32{0, float32(math.Copysign(0, -1)), 0.5, -0.5, 0.49999997, -0.49999997,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e30, -1e30, 1e-30, -1e-30, 13.3, -13.3}
	for _, tc := range erf32Cases {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 1001} {
			xs := make([]float32, n)
			for i := range xs {
				xs[i] = float32(rng.NormFloat64() * 4)
			}
			if n > len(special) {
				copy(xs[n-len(special)-1:], special)
			}
			ys := make([]float32, n)
			tc.slice(ys, xs)
			for i, x := range xs {
				want := tc.scalar(x)
				if want != want {
					require.True(t, ys[i] != ys[i], "%s(%g) = %g, want NaN", tc.name, x, ys[i])
					continue
				}
				if ys[i] == want {
					continue
				}
				require.LessOrEqual(t, math.Abs(float64(ys[i]-want)), 1.5*math.Abs(float64(math.Nextafter32(want, 0)-want))+0x1p-149,
					"%s n=%d i=%d: vector %g, scalar %g at x=%g", tc.name, n, i, ys[i], want, x)
			}
		}
	}
}

// TestErf32SpecialValues pins the values with a definite answer.
func TestErf32SpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	cases := []struct {
		name      string
		fn        func(float32) float32
		x, want   float32
		wantIsNaN bool
	}{
		{"erf(0)", Erf32, 0, 0, false},
		{"erf(+Inf)", Erf32, inf, 1, false},
		{"erf(-Inf)", Erf32, -inf, -1, false},
		{"erf(NaN)", Erf32, nan, 0, true},
		{"erf(20)", Erf32, 20, 1, false},
		{"gelu(0)", Gelu32, 0, 0, false},
		{"gelu(+Inf)", Gelu32, inf, inf, false},
		{"gelu(-Inf)", Gelu32, -inf, 0, true}, // -Inf·0, as the float64 form gives
		{"gelu(NaN)", Gelu32, nan, 0, true},
		{"gelu(20)", Gelu32, 20, 20, false},
	}
	for _, tc := range cases {
		for k, got := range [2]float32{tc.fn(tc.x), viaSlice(tc.name[:4] == "gelu", tc.x)} {
			if tc.wantIsNaN {
				require.True(t, got != got, "%s [%d] = %g, want NaN", tc.name, k, got)
			} else {
				require.Equal(t, tc.want, got, "%s [%d]", tc.name, k)
			}
		}
	}
}

// viaSlice runs x through the vector kernel in all eight lanes.
func viaSlice(gelu bool, x float32) float32 {
	xs := []float32{x, x, x, x, x, x, x, x}
	ys := make([]float32, 8)
	if gelu {
		Gelu(ys, xs)
	} else {
		Erf(ys, xs)
	}
	return ys[3]
}

func TestErfGeluFloat64(t *testing.T) {
	xs := []float64{-9, -2.5, -0.3, 0, 1e-9, 0.7, 4}
	ys := make([]float64, len(xs))
	Erf(ys, xs)
	for i, x := range xs {
		require.Equal(t, math.Erf(x), ys[i])
	}
	Gelu(ys, xs)
	for i, x := range xs {
		require.InDelta(t, 0.5*x*math.Erfc(-x/math.Sqrt2), ys[i], 1e-15*math.Max(1, math.Abs(x)))
	}
}

func BenchmarkGelu32(b *testing.B) {
	xs := normal32(5, 4096)
	ys := make([]float32, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		Gelu(ys, xs)
	}
}

func BenchmarkGeluMathErf(b *testing.B) {
	xs := normal32(5, 4096)
	ys := make([]float32, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		for i, v := range xs {
			ys[i] = float32(0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2)))
		}
	}
}
