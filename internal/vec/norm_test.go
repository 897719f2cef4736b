package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// TestNormLoops checks the normalisation loops against plain float64 loops
// on every length, unaligned, with the assembly (where this CPU has it)
// and with the Go loops forced: the maps bit for bit, the sums within
// round-off of a float64 sum (4n·ε·Σ|terms|). The data have a mean far
// from zero, as activations can, so that a sum of squared deviations taken
// carelessly would lose its digits.
func TestNormLoops(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range append(lengths, 15, 16, 47, 1000) {
			checkNorm[float32](t, rng, n)
			checkNorm[float64](t, rng, n)
		}
	})
}

func checkNorm[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	fill := func(off float64) []T {
		s := make([]T, n+1)
		for i := range s {
			s[i] = T(off + rng.NormFloat64())
		}
		return s[1:] // unaligned
	}
	x, g, gamma, beta := fill(50), fill(0), fill(1), fill(0)
	mu := 50 + rng.NormFloat64()/10
	sum, sq, sg, sgx, abs, absSq, absG, absGX := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
	for i := range n {
		v, d, gv := float64(x[i]), float64(x[i])-mu, float64(g[i])
		sum, abs = sum+v, abs+math.Abs(v)
		sq, absSq = sq+d*d, absSq+d*d
		sg, absG = sg+gv, absG+math.Abs(gv)
		sgx, absGX = sgx+gv*d, absGX+math.Abs(gv*d)
	}
	tol := func(a float64) float64 { return 4 * float64(n) * 0x1p-52 * a }
	require.InDelta(t, sum, SumF64(x), tol(abs), "SumF64 n=%d", n)
	require.InDelta(t, sq, SumSqDevF64(x, mu), tol(absSq), "SumSqDevF64 n=%d", n)
	gotG, gotGX := SumProdDevF64(g, x, mu)
	require.InDelta(t, sg, gotG, tol(absG), "SumProdDevF64 Σg n=%d", n)
	require.InDelta(t, sgx, gotGX, tol(absGX), "SumProdDevF64 Σg·(x−mu) n=%d", n)

	k, b, c0, c1 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
	want, got := make([]T, n), make([]T, n)
	for i := range n {
		want[i] = T((float64(x[i])-mu)*k + b)
	}
	Affine(got, x, mu, k, b)
	require.Equal(t, want, got, "Affine n=%d", n)
	for i := range n {
		want[i] = T(k * (float64(g[i]) - c0 - c1*(float64(x[i])-mu)))
	}
	AffineGrad(got, g, x, mu, k, c0, c1)
	require.Equal(t, want, got, "AffineGrad n=%d", n)
	for i := range n {
		want[i] = T(float64(gamma[i])*((float64(x[i])-mu)*k) + float64(beta[i]))
	}
	NormScale(got, x, gamma, beta, mu, k)
	require.Equal(t, want, got, "NormScale n=%d", n)

	inv := 1 / (1 + rng.Float64())
	wantGamma, wantBeta := make([]float64, n), make([]float64, n)
	gotGamma, gotBeta := make([]float64, n), make([]float64, n)
	for i := range n {
		wantGamma[i], wantBeta[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	copy(gotGamma, wantGamma)
	copy(gotBeta, wantBeta)
	sg, sgx, absG, absGX = 0, 0, 0, 0
	for i := range n {
		xh := (float64(x[i]) - mu) * inv
		v := float64(g[i])
		gg := v * float64(gamma[i])
		sg, absG = sg+gg, absG+math.Abs(gg)
		sgx, absGX = sgx+gg*xh, absGX+math.Abs(gg*xh)
		wantGamma[i] += v * xh
		wantBeta[i] += v
		want[i] = T(inv * (float64(g[i])*float64(gamma[i]) - c0 - xh*c1))
	}
	gotG, gotGX = NormScaleGradSums(g, x, gamma, gotGamma, gotBeta, mu, inv)
	require.InDelta(t, sg, gotG, tol(absG), "NormScaleGradSums Σg·γ n=%d", n)
	require.InDelta(t, sgx, gotGX, tol(absGX), "NormScaleGradSums Σg·γ·x̂ n=%d", n)
	require.Equal(t, wantGamma, gotGamma, "NormScaleGradSums sgamma n=%d", n)
	require.Equal(t, wantBeta, gotBeta, "NormScaleGradSums sbeta n=%d", n)
	NormScaleGrad(got, g, x, gamma, mu, inv, c0, c1)
	require.Equal(t, want, got, "NormScaleGrad n=%d", n)
}
