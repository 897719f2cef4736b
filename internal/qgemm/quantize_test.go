package qgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuantizeWeights(t *testing.T) {
	// Column 0: max |w| 6.3, scale 0.1; column 1: all zero; column 2: ties
	// at scale 1 (max 63).
	w := []float32{
		6.3, 0, 63,
		-6.3, 0, 2.5,
		0.05, 0, -3.5,
		0.15, 0, -0.5,
	}
	q, s, err := QuantizeWeights(4, 3, w, 3)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float32{0.1, 1, 1}, s, 1e-7)
	require.Equal(t, []int8{63, 0, 63, -63, 0, 2, 0, 0, -4, 2, 0, 0}, q)

	_, _, err = QuantizeWeights(2, 2, []float32{1, 2, float32(math.Inf(1)), 0}, 2)
	require.ErrorContains(t, err, "W[1][0] = +Inf")
	_, _, err = QuantizeWeights(2, 2, []float32{1, 2, 3}, 2)
	require.ErrorContains(t, err, "needs 4 elements")
}

func TestDynamicQuantizeLinear(t *testing.T) {
	cases := []struct {
		name  string
		x     []float32
		scale float32
		zero  uint8
		q     []uint8
	}{
		// The ONNX operator's own example (onnx/docs/Operators.md).
		{"onnx example", []float32{0, 2, -3, -2.5, 1.34, 0.5}, 0.019607844, 153, []uint8{153, 255, 0, 26, 221, 179}},
		{"positive only", []float32{1, 2.55, 0}, 0.01, 0, []uint8{100, 255, 0}},
		{"negative only", []float32{-2.55, -1}, 0.01, 255, []uint8{0, 155}},
		{"zeros", []float32{0, 0}, 1, 0, []uint8{0, 0}},
	}
	for _, c := range cases {
		q := make([]uint8, len(c.x))
		s, z, err := DynamicQuantizeLinear(c.x, q)
		require.NoError(t, err, c.name)
		require.InDelta(t, c.scale, s, 1e-8, c.name)
		require.Equal(t, c.zero, z, c.name)
		require.Equal(t, c.q, q, c.name)
	}
	_, _, err := DynamicQuantizeLinear([]float32{1, float32(nan())}, make([]uint8, 2))
	require.ErrorContains(t, err, "element 1 is NaN")
	_, _, err = DynamicQuantizeLinear([]float32{1, 2}, make([]uint8, 1))
	require.ErrorContains(t, err, "1 bytes for 2 values")
}

// TestLinearDynamic compares the dynamically quantized linear layer with
// the float64 product of the float32 operands, element by element,
// within the bound its two roundings give: x = sx·(qx − zp) + ex with
// |ex| <= sx (half a step of rounding, and up to one step where the top
// of the range saturates), w = sw·qw + ew with |ew| <= sw/2, so
// |Σ x·w − Σ x̂·ŵ| <= Σ_p (|x|·sw/2 + |w|·sx + sx·sw/2), plus float32
// slack.
func TestLinearDynamic(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 10))
		for _, s := range [][3]int{{64, 128, 784}, {1, 10, 64}, {7, 33, 65}, {3, 1, 1}} {
			m, n, k := s[0], s[1], s[2]
			x, w, bias := make([]float32, m*k), make([]float32, k*n), make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range w {
				w[i] = float32(rng.NormFloat64() * 0.05)
			}
			for j := range bias {
				bias[j] = float32(rng.NormFloat64())
			}
			qw, sw, err := QuantizeWeights(k, n, w, n)
			require.NoError(t, err)
			pb, err := PackB(k, n, qw, n)
			require.NoError(t, err)
			out := make([]float32, m*n)
			qbuf := make([]uint8, m*k)
			require.NoError(t, LinearDynamic(m, x, pb, sw, bias, qbuf, out, n))
			lo, hi := 0.0, 0.0
			for _, v := range x {
				lo, hi = min(lo, float64(v)), max(hi, float64(v))
			}
			sx := (hi - lo) / 255
			worst := 0.0
			for i := range m {
				for j := range n {
					want, bound := float64(bias[j]), 0.0
					for p := range k {
						xv, wv := float64(x[i*k+p]), float64(w[p*n+j])
						want += xv * wv
						bound += abs(xv)*float64(sw[j])/2 + abs(wv)*sx + sx*float64(sw[j])/2
					}
					bound += 1e-5 * (1 + abs(want))
					got := float64(out[i*n+j])
					require.LessOrEqual(t, abs(got-want), bound, "m=%d n=%d k=%d (%d, %d): got %v want %v", m, n, k, i, j, got, want)
					worst = max(worst, abs(got-want)/bound)
				}
			}
			require.Greater(t, worst, 0.0, "the quantized product must differ from float somewhere")
		}
	})
	pb, err := PackB(2, 1, []int8{1, 1}, 1)
	require.NoError(t, err)
	require.ErrorContains(t, LinearDynamic(2, make([]float32, 3), pb, []float32{1}, nil, make([]uint8, 4), make([]float32, 2), 1), "x has 3 elements, want [2, 2] = 4")
	require.ErrorContains(t, LinearDynamic(2, make([]float32, 4), pb, []float32{1}, nil, make([]uint8, 3), make([]float32, 2), 1), "3 bytes of buffer")
}
