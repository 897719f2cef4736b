package qgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuantizeLinearU8(t *testing.T) {
	for _, c := range []struct {
		v, scale float32
		zero     uint8
		want     uint8
	}{
		{0, 1, 0, 0},
		{0.5, 1, 0, 0},   // tie to even
		{1.5, 1, 0, 2},   // tie to even
		{2.5, 1, 10, 12}, // tie to even, then the zero point
		{-0.5, 1, 3, 3},
		{-1.5, 1, 3, 1},
		{-10, 1, 3, 0},   // saturates low
		{300, 1, 0, 255}, // saturates high
		{100, 0.5, 100, 255},
		{float32(math.NaN()), 1, 7, 7},
		{float32(math.Inf(1)), 1, 7, 255},
		{float32(math.Inf(-1)), 1, 7, 0},
	} {
		require.Equal(t, c.want, QuantizeLinearU8(c.v, c.scale, c.zero), "v=%v scale=%v zero=%d", c.v, c.scale, c.zero)
	}
}

// TestGemmUint8 checks the uint8 output against the reference sums put
// through GemmUint8's requantization one value at a time,
// on random and odd shapes, with a zero point and an output scale small
// enough that many values saturate at both ends.
func TestGemmUint8(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 8))
		shapes := [][3]int{{1, 1, 1}, {3, 17, 25}, {5, 20, 25}, {7, 50, 500}, {64, 10, 800}, {4, 16, 4}, {9, 33, 13}}
		for range 30 {
			shapes = append(shapes, [3]int{1 + rng.IntN(40), 1 + rng.IntN(70), 1 + rng.IntN(90)})
		}
		saturated := 0
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			a, lda, b, ldb := operands(rng, m, n, k, rng.IntN(3), rng.IntN(3))
			zpA := uint8(rng.IntN(256))
			pb, err := PackB(k, n, b, ldb)
			require.NoError(t, err)
			ep := &Epilogue{ScaleA: 0.02, ScaleB: make([]float32, n), Bias: make([]float32, n), ReLU: rng.IntN(2) == 0}
			for j := range n {
				ep.ScaleB[j] = 0.001 + rng.Float32()*0.01
				ep.Bias[j] = rng.Float32() - 0.5
			}
			rq := RequantU8{Scale: 0.01 + rng.Float32()*0.05, Zero: uint8(rng.IntN(256))}
			ldo := n + 2
			got := make([]uint8, m*ldo)
			for i := range got {
				got[i] = 0xAA
			}
			require.NoError(t, GemmUint8(m, a, lda, zpA, pb, ep, rq, got, ldo))
			acc := make([]int32, m*n)
			Reference(m, n, k, a, lda, zpA, b, ldb, acc, n)
			for i := range m {
				for j := range n {
					want := requantRef(acc[i*n+j], RequantMultiplier(ep.ScaleA, ep.ScaleB[j], rq.Scale), ep.Bias[j]/rq.Scale, rq.Zero, ep.ReLU)
					require.Equal(t, want, got[i*ldo+j], "m=%d n=%d k=%d at [%d][%d]", m, n, k, i, j)
					if want == 0 || want == 255 {
						saturated++
					}
				}
				for j := n; j < ldo && i < m-1; j++ {
					require.Equal(t, uint8(0xAA), got[i*ldo+j], "the gap between rows must stay untouched")
				}
			}
		}
		require.Greater(t, saturated, 100, "the case must exercise saturation")
	})
}

func TestGemmUint8Errors(t *testing.T) {
	pb, err := PackB(3, 2, make([]int8, 6), 2)
	require.NoError(t, err)
	ep := &Epilogue{ScaleA: 1, ScaleB: []float32{1, 1}}
	out := make([]uint8, 4)
	require.ErrorContains(t, GemmUint8(2, make([]uint8, 6), 3, 0, pb, ep, RequantU8{Scale: 0}, out, 2), "output scale")
	require.ErrorContains(t, GemmUint8(2, make([]uint8, 6), 3, 0, pb, ep, RequantU8{Scale: 1}, out[:3], 2), "output")
	require.ErrorContains(t, GemmUint8(2, make([]uint8, 6), 3, 0, nil, ep, RequantU8{Scale: 1}, out, 2), "nil packed")
	require.ErrorContains(t, GemmUint8(2, make([]uint8, 6), 3, 0, pb, &Epilogue{ScaleA: 1, ScaleB: []float32{1}}, RequantU8{Scale: 1}, out, 2), "weight scales")
}

// requantRef is GemmUint8's formula for one value, in float64 rounding
// after the float32 multiply-add.
func requantRef(acc int32, mul, add float32, zero uint8, relu bool) uint8 {
	t := float32(acc)*mul + add
	q := math.RoundToEven(float64(t)) + float64(zero)
	if math.IsNaN(q) {
		q = 0
	}
	q = min(max(q, 0), 255)
	if relu {
		q = max(q, float64(zero))
	}
	return uint8(q)
}

// requantizeRow's fast rounding, Go and assembly, gives the float64
// rounding's value for ties, near-ties, saturating and huge values, and
// clamps at lo (the assembly on rows of 16 columns).
func TestRequantizeRow(t *testing.T) {
	eachPath(t, testRequantizeRow)
}

func testRequantizeRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 9))
	var acc []int32
	for i := -700; i <= 700; i++ {
		acc = append(acc, int32(i))
	}
	for range 5000 {
		acc = append(acc, rng.Int32N(1<<30)-1<<29)
	}
	for _, c := range []struct {
		mul, add float32
		zero     uint8
		relu     bool
	}{{0.5, 0, 0, false}, {0.5, 0.25, 128, false}, {0.5, -0.5, 7, true}, {0.0371, 3.5, 255, false}, {1e-9, 0, 1, true}, {3e5, 0, 9, false}} {
		n := len(acc)
		mul, add, corr := make([]float32, n), make([]float32, n), make([]int32, n)
		for j := range n {
			mul[j], add[j] = c.mul, c.add
		}
		lo := uint8(0)
		if c.relu {
			lo = c.zero
		}
		got := make([]uint8, n)
		if ks := current(); ks.requant != nil { // rows of 16 columns
			ks.requant(n/16, acc[:n/16*16], corr[:16], mul[:16], add[:16], c.zero, lo, got)
			n = n / 16 * 16
		} else {
			requantizeRow(acc, corr, mul, add, c.zero, lo, got)
		}
		for j, a := range acc[:n] {
			require.Equal(t, requantRef(a, c.mul, c.add, c.zero, c.relu), got[j], "acc=%d %+v", a, c)
		}
	}
}
