package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exp32Tol is the relative error allowed to Exp32 against math.Exp
// rounded to float32: two float32 ulps (2^-23 each, relative to at most
// twice the value).
const exp32Tol = 2.4e-7

func TestExpf32MatchesMathExp(t *testing.T) {
	worst := 0.0
	for x := float32(-87.3); x <= 88; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(Exp32(x))
		worst = max(worst, math.Abs(got-want)/want)
	}
	require.Less(t, worst, exp32Tol)
	for _, tc := range []struct {
		x, want float32
	}{
		{0, 1},
		{float32(math.Inf(-1)), 0},
		{-88, 0}, // below ln 2^-126: subnormal results are dropped
		{-1000, 0},
	} {
		require.Equal(t, tc.want, Exp32(tc.x), "exp(%v)", tc.x)
	}
	require.True(t, math.IsNaN(float64(Exp32(float32(math.NaN())))))
	require.InEpsilon(t, math.Exp(float64(float32(expHi))), float64(Exp32(1000)), exp32Tol, "clamped at ln 2^127")
}

// TestExpShift32MatchesReference runs the vector kernel and the scalar
// tail on rows of odd lengths, with masked (-Inf) entries, against
// math.Exp.
func TestExpShift32MatchesReference(t *testing.T) {
	for _, n := range []int{1, 3, 8, 17, 127, 513} {
		x := normal32(uint64(n), n)
		for i := range x {
			x[i] *= 8
			if i%5 == 3 {
				x[i] = float32(math.Inf(-1))
			}
		}
		m := x[0]
		for _, v := range x {
			m = max(m, v)
		}
		want := make([]float64, n)
		wantSum := 0.0
		for i, v := range x {
			want[i] = math.Exp(float64(v - m))
			wantSum += want[i]
		}
		src := slices.Clone(x)
		into := make([]float32, n+1) // one spare element that must stay put
		into[n] = 42
		only := expShift32(nil, src, m) // the sum alone
		apart := expShift32(into[:n], src, m)
		require.Equal(t, x, src, "n %d: a separate destination leaves the source alone", n)
		require.Equal(t, float32(42), into[n], "n %d: nothing written past n", n)
		sum := expShift32(x, x, m)
		for i, w := range want {
			require.InDelta(t, w, float64(x[i]), exp32Tol*w, "n %d, element %d", n, i)
		}
		require.InEpsilon(t, wantSum, sum, exp32Tol, "n %d", n)
		require.Equal(t, x, into[:n], "n %d: in place and apart agree", n)
		require.Equal(t, sum, apart, "n %d", n)
		require.Equal(t, sum, only, "n %d", n)
	}
}

// The vector kernel gives what Exp32 gives for NaN, ±Inf, and the ends of
// the range, in every lane: NaN stays NaN (and makes the sum NaN), -Inf
// and underflow give 0, +Inf and overflow +Inf.
func TestExpShift32SpecialValues(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)), -200, 200, -87.5, 88.5, 0}
	for lane := range 8 {
		for _, v := range specials {
			x := make([]float32, 16)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			x[lane], x[8+lane] = v, v
			want := make([]float32, len(x))
			for i, xv := range x {
				want[i] = Exp32(xv)
			}
			sum := expShift32(x, x, 0)
			for i := range x {
				if math.IsNaN(float64(want[i])) {
					assert.True(t, math.IsNaN(float64(x[i])), "lane %d, value %v: element %d is %v", lane, v, i, x[i])
				} else {
					assert.Equal(t, want[i], x[i], "lane %d, value %v: element %d", lane, v, i)
				}
			}
			assert.Equal(t, math.IsNaN(float64(v)), math.IsNaN(sum), "lane %d, value %v: sum %v", lane, v, sum)
		}
	}
}

// TestExpScale32MatchesExpShift checks the scaling kernel lane by lane
// against the exponential times the factor, on rows of odd lengths with
// -Inf, NaN and out-of-range entries: the same bits, and nothing written
// past the row.
func TestExpScale32MatchesExpShift(t *testing.T) {
	for _, n := range []int{1, 7, 8, 17, 127, 513} {
		x := normal32(uint64(n)+100, n)
		specials := []float32{float32(math.Inf(-1)), float32(math.NaN()), -200, 200}
		for i := range x {
			x[i] *= 8
			if i%5 == 3 {
				x[i] = specials[(i/5)%len(specials)]
			}
		}
		const m, scale = float32(1.5), float32(0.99999988)
		want := slices.Clone(x)
		expShift32(want, want, m)
		for i := range want {
			want[i] *= scale
		}
		got := make([]float32, n+1)
		got[n] = 42
		ExpShiftScale32(got[:n], x, m, scale)
		for i := range want {
			if math.IsNaN(float64(want[i])) {
				require.True(t, math.IsNaN(float64(got[i])), "n %d, element %d", n, i)
				continue
			}
			require.Equal(t, want[i], got[i], "n %d, element %d (x = %v)", n, i, x[i])
		}
		require.Equal(t, float32(42), got[n], "n %d: nothing written past n", n)
	}
}

// BenchmarkExpShift32 times the vector exponential on a row that stays in
// L1: the softmax's exp-and-sum pass, per element.
func BenchmarkExpShift32(b *testing.B) {
	x := normal32(5, 2048)
	y := make([]float32, len(x))
	for b.Loop() {
		expShift32(y, x, 4)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
}

// normal32 returns n standard normal float32 values drawn from a PCG
// seeded with seed.
func normal32(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}
