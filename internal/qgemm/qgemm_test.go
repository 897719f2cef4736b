package qgemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// eachPath runs test once per kernel implementation this build and CPU
// have, skipping AVX2 where it is missing.
func eachPath(t *testing.T, test func(t *testing.T)) {
	for _, ks := range []*kernels{goKernels, avx2Kernels} {
		name := "avx2"
		if ks != nil {
			name = ks.name
		}
		t.Run(name, func(t *testing.T) {
			if ks == nil {
				t.Skip("this CPU or build lacks AVX2")
			}
			current()
			old := active
			active = ks
			t.Cleanup(func() { active = old })
			test(t)
		})
	}
}

// operands returns random A (m×k, row stride lda = k+padA) and B (k×n,
// row stride ldb = n+padB) with weights in the 7-bit range.
func operands(rng *rand.Rand, m, n, k, padA, padB int) (a []uint8, lda int, b []int8, ldb int) {
	lda, ldb = k+padA, n+padB
	a = make([]uint8, max(m*lda, 1))
	for i := range a {
		a[i] = uint8(rng.IntN(256))
	}
	b = make([]int8, max(k*ldb, 1))
	for i := range b {
		b[i] = int8(MinWeight + rng.IntN(MaxWeight-MinWeight+1))
	}
	return a, lda, b, ldb
}

// checkInt32 runs GemmInt32 and compares it with Reference, exactly.
func checkInt32(t *testing.T, m, n, k int, a []uint8, lda int, zpA uint8, b []int8, ldb int) {
	t.Helper()
	pb, err := PackB(k, n, b, ldb)
	require.NoError(t, err)
	ldc := n + 3
	got := make([]int32, max(m*ldc, 1))
	want := make([]int32, max(m*ldc, 1))
	for i := range got {
		got[i], want[i] = -7, -7 // the gaps between rows must stay untouched
	}
	require.NoError(t, GemmInt32(m, a, lda, zpA, pb, got, ldc))
	Reference(m, n, k, a, lda, zpA, b, ldb, want, ldc)
	require.Equal(t, want, got, "m=%d n=%d k=%d zpA=%d", m, n, k, zpA)
}

func TestGemmInt32RandomShapes(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 3))
		for range 300 {
			m, n, k := 1+rng.IntN(67), 1+rng.IntN(67), 1+rng.IntN(67)
			a, lda, b, ldb := operands(rng, m, n, k, rng.IntN(3), rng.IntN(3))
			checkInt32(t, m, n, k, a, lda, uint8(rng.IntN(256)), b, ldb)
		}
	})
}

func TestGemmInt32OddShapes(t *testing.T) {
	shapes := [][3]int{ // m, n, k: around the tile (4×16), the K group (4) and the blocks
		{1, 1, 1}, {1, 16, 4}, {1, 17, 5}, {1, 500, 800}, {2, 15, 3}, {3, 33, 7},
		{4, 16, 4}, {5, 16, 4}, {7, 31, 67}, {8, 48, 64}, {9, 1, 9}, {13, 64, 2},
		{64, 500, 800}, {67, 67, 67}, {300, 20, 300}, {259, 40, 17}, {6, 1200, 70},
	}
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 4))
		for _, s := range shapes {
			a, lda, b, ldb := operands(rng, s[0], s[1], s[2], 1, 2)
			for _, zp := range []uint8{0, 128, 255} {
				checkInt32(t, s[0], s[1], s[2], a, lda, zp, b, ldb)
			}
		}
	})
}

// TestGemmInt32Extremes fills A and B with the ends of their ranges: the
// largest sums the kernels can meet, with zero points at both ends.
func TestGemmInt32Extremes(t *testing.T) {
	cases := []struct {
		name string
		a    uint8
		b    int8
		zp   uint8
	}{
		{"255 by -64", 255, MinWeight, 0},
		{"255 by 63", 255, MaxWeight, 0},
		{"0 by -64, zero point 255", 0, MinWeight, 255},
		{"0 by 63, zero point 255", 0, MaxWeight, 255},
		{"255 by -64, zero point 255", 255, MinWeight, 255},
		{"0 by 0", 0, 0, 0},
	}
	eachPath(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				for _, s := range [][3]int{{5, 17, 131}, {1, 33, 4099}, {8, 16, 64}} {
					m, n, k := s[0], s[1], s[2]
					a := make([]uint8, m*k)
					b := make([]int8, k*n)
					for i := range a {
						a[i] = c.a
					}
					for i := range b {
						b[i] = c.b
					}
					checkInt32(t, m, n, k, a, k, c.zp, b, n)
				}
			})
		}
	})
}

// madd16 is VPMADDUBSW's arithmetic on one 16-bit lane: two u8×s8
// products added and saturated to int16.
func madd16(a0, a1 uint8, b0, b1 int8) int32 {
	return min(max(int32(a0)*int32(b0)+int32(a1)*int32(b1), -32768), 32767)
}

// TestSaturationGuard shows why the weights are limited to 7 bits and
// that the guard holds: with full-range weights a 16-bit pair sum
// saturates (255·(-128)·2 = -65280 becomes -32768), PackB rejects such
// weights, and at the 7-bit limits every pair sum is exact, so a long K
// of them gives the reference's sum exactly.
func TestSaturationGuard(t *testing.T) {
	require.Equal(t, int32(-32768), madd16(255, 255, -128, -128), "full-range weights saturate the pair sum")
	require.Equal(t, int32(32767), madd16(255, 255, 127, 127), "full-range weights saturate the pair sum")
	require.Equal(t, int32(255*MinWeight*2), madd16(255, 255, MinWeight, MinWeight))
	require.Equal(t, int32(255*MaxWeight*2), madd16(255, 255, MaxWeight, MaxWeight))

	for _, w := range []int8{-128, -127, -65, 64, 127} {
		b := []int8{0, 1, 2, w, 3, 4}
		_, err := PackB(2, 3, b, 3)
		require.ErrorContains(t, err, fmt.Sprintf("B[1][0] = %d outside [-64, 63]", w))
	}

	eachPath(t, func(t *testing.T) {
		const m, n, k = 4, 16, 2048
		a := make([]uint8, m*k)
		b := make([]int8, k*n)
		for i := range a {
			a[i] = 255
		}
		for p := range k {
			for j := range n {
				b[p*n+j] = MinWeight
				if j%2 == 1 {
					b[p*n+j] = MaxWeight
				}
			}
		}
		pb, err := PackB(k, n, b, n)
		require.NoError(t, err)
		c := make([]int32, m*n)
		require.NoError(t, GemmInt32(m, a, k, 0, pb, c, n))
		for i := range m {
			for j := range n {
				want := int32(255 * MinWeight * k)
				if j%2 == 1 {
					want = 255 * MaxWeight * k
				}
				require.Equal(t, want, c[i*n+j], "row %d column %d", i, j)
			}
		}
	})
}

func TestGemmFloat32(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 5))
		for _, s := range [][3]int{{1, 10, 784}, {7, 33, 65}, {64, 50, 800}, {3, 1, 1}} {
			m, n, k := s[0], s[1], s[2]
			a, lda, b, ldb := operands(rng, m, n, k, 0, 0)
			zp := uint8(rng.IntN(256))
			pb, err := PackB(k, n, b, ldb)
			require.NoError(t, err)
			ep := &Epilogue{ScaleA: 0.02, ScaleB: make([]float32, n), Bias: make([]float32, n)}
			for j := range n {
				ep.ScaleB[j] = 0.001 + 0.01*rng.Float32()
				ep.Bias[j] = rng.Float32() - 0.5
			}
			acc := make([]int32, m*n)
			Reference(m, n, k, a, lda, zp, b, ldb, acc, n)
			for _, relu := range []bool{false, true} {
				for _, bias := range []bool{false, true} {
					e := *ep
					e.ReLU = relu
					if !bias {
						e.Bias = nil
					}
					out := make([]float32, m*n)
					require.NoError(t, GemmFloat32(m, a, lda, zp, pb, &e, out, n))
					for i := range m {
						for j := range n {
							want := float64(e.ScaleA) * float64(e.ScaleB[j]) * float64(acc[i*n+j])
							if bias {
								want += float64(e.Bias[j])
							}
							if relu {
								want = max(want, 0)
							}
							require.InDelta(t, want, out[i*n+j], 1e-5*(1+abs(want)), "m=%d n=%d k=%d (%d, %d) relu=%v bias=%v", m, n, k, i, j, relu, bias)
						}
					}
				}
			}
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestQuantizeLinear(t *testing.T) {
	cases := []struct {
		v, scale float32
		zero     int8
		want     int8
	}{
		{2.5, 1, 0, 2}, {3.5, 1, 0, 4}, {-2.5, 1, 0, -2}, {-3.5, 1, 0, -4},
		{0.5, 1, 0, 0}, {-0.5, 1, 0, 0}, {1.5, 1, 0, 2}, {0.25, 0.5, 0, 0},
		{0.75, 0.5, 0, 2}, {2.5, 1, 10, 12}, {3.5, 1, -10, -6},
		{126.5, 1, 0, 126}, {127.5, 1, 0, 127}, {1000, 1, 0, 127}, {-1000, 1, 0, -128},
		{-128.5, 1, 0, -128}, {100, 1, 100, 127}, {-100, 1, -100, -128},
		{float32(nan()), 1, 5, 5},
	}
	for _, c := range cases {
		require.Equal(t, c.want, QuantizeLinear(c.v, c.scale, c.zero), "v=%v scale=%v zero=%d", c.v, c.scale, c.zero)
	}
}

func nan() float64 {
	var z float64
	return z / z
}

// TestGemmInt8Ties makes every output a rounding tie or an exact value:
// with ScaleA·ScaleB = 0.5 and an output scale of 1, an odd sum s is the
// tie s/2, which ONNX rounds to even. The expectation is integer
// arithmetic on the reference's sums, independent of the float path.
func TestGemmInt8Ties(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 6))
		const m, n, k = 9, 19, 5
		a := make([]uint8, m*k)
		b := make([]int8, k*n)
		for i := range a {
			a[i] = uint8(rng.IntN(4))
		}
		for i := range b {
			b[i] = int8(rng.IntN(7) - 3)
		}
		pb, err := PackB(k, n, b, n)
		require.NoError(t, err)
		acc := make([]int32, m*n)
		const zpA = 1
		Reference(m, n, k, a, k, zpA, b, n, acc, n)
		scales := make([]float32, n)
		for j := range scales {
			scales[j] = 1
		}
		out := make([]int8, m*n)
		require.NoError(t, GemmInt8(m, a, k, zpA, pb, &Epilogue{ScaleA: 0.5, ScaleB: scales}, Requant{Scale: 1, Zero: 3}, out, n))
		ties := 0
		for i, s := range acc {
			q := s / 2 // toward zero
			if s%2 != 0 {
				ties++
				if q%2 != 0 { // the neighbour away from zero is the even one
					q += s % 2
				}
			}
			require.Equal(t, int8(min(max(q+3, -128), 127)), out[i], "sum %d", s)
		}
		require.Greater(t, ties, 20, "the case must exercise ties")
	})
}

func TestGemmInt8Saturates(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		const k = 8
		a := []uint8{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0}
		b := make([]int8, k*2)
		for p := range k {
			b[p*2], b[p*2+1] = 63, -64
		}
		pb, err := PackB(k, 2, b, 2)
		require.NoError(t, err)
		out := make([]int8, 4)
		ep := &Epilogue{ScaleA: 1, ScaleB: []float32{1, 1}, Bias: []float32{0, 0.5}, ReLU: false}
		require.NoError(t, GemmInt8(2, a, k, 0, pb, ep, Requant{Scale: 1, Zero: 0}, out, 2))
		require.Equal(t, []int8{127, -128, 0, 0}, out)
		ep.ReLU = true
		require.NoError(t, GemmInt8(2, a, k, 0, pb, ep, Requant{Scale: 1, Zero: -5}, out, 2))
		require.Equal(t, []int8{127, -5, -5, -5}, out)
	})
}

func TestErrors(t *testing.T) {
	pb, err := PackB(3, 2, make([]int8, 6), 2)
	require.NoError(t, err)
	ep := &Epilogue{ScaleA: 1, ScaleB: []float32{1, 1}}
	a := make([]uint8, 6)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"PackB short", func() error { _, err := PackB(3, 2, make([]int8, 5), 2); return err }(), "needs 6 elements, have 5"},
		{"PackB stride", func() error { _, err := PackB(3, 2, make([]int8, 6), 1); return err }(), "row stride 1 below n=2"},
		{"PackB negative", func() error { _, err := PackB(-1, 2, nil, 2); return err }(), "negative shape"},
		{"PackB long k", func() error { _, err := PackB(MaxK+1, 1, nil, 1); return err }(), "overflow"},
		{"nil pack", GemmInt32(1, a, 3, 0, nil, make([]int32, 2), 2), "nil packed weights"},
		{"A short", GemmInt32(3, a, 3, 0, pb, make([]int32, 6), 2), "A [3, 3] with row stride 3 needs 9 elements, have 6"},
		{"A stride", GemmInt32(2, a, 2, 0, pb, make([]int32, 4), 2), "A row stride 2 below k=3"},
		{"C short", GemmInt32(2, a, 3, 0, pb, make([]int32, 3), 2), "GemmInt32: output [2, 2] with row stride 2 needs 4 elements, have 3"},
		{"negative m", GemmInt32(-1, a, 3, 0, pb, nil, 2), "negative row count"},
		{"scales", GemmFloat32(2, a, 3, 0, pb, &Epilogue{ScaleA: 1, ScaleB: []float32{1}}, make([]float32, 4), 2), "1 weight scales for 2 columns"},
		{"bad scale", GemmFloat32(2, a, 3, 0, pb, &Epilogue{ScaleA: 1, ScaleB: []float32{1, -1}}, make([]float32, 4), 2), "weight scale 1 is -1"},
		{"scale A", GemmFloat32(2, a, 3, 0, pb, &Epilogue{ScaleA: 0, ScaleB: []float32{1, 1}}, make([]float32, 4), 2), "activation scale 0"},
		{"bias", GemmFloat32(2, a, 3, 0, pb, &Epilogue{ScaleA: 1, ScaleB: []float32{1, 1}, Bias: []float32{1}}, make([]float32, 4), 2), "1 biases for 2 columns"},
		{"nil epilogue", GemmFloat32(2, a, 3, 0, pb, nil, make([]float32, 4), 2), "nil epilogue"},
		{"out scale", GemmInt8(2, a, 3, 0, pb, ep, Requant{Scale: float32(nan())}, make([]int8, 4), 2), "output scale NaN"},
		{"int8 short", GemmInt8(2, a, 3, 0, pb, ep, Requant{Scale: 1}, make([]int8, 3), 2), "GemmInt8: output [2, 2]"},
	}
	for _, c := range cases {
		require.ErrorContains(t, c.err, c.want, c.name)
	}
}

// TestEmpty covers the products with nothing to sum or nothing to write:
// k = 0 gives zero sums (the bias alone in the float epilogue).
func TestEmpty(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		pb, err := PackB(0, 3, nil, 3)
		require.NoError(t, err)
		out := []float32{9, 9, 9, 9, 9, 9}
		ep := &Epilogue{ScaleA: 1, ScaleB: []float32{1, 1, 1}, Bias: []float32{1, -2, 3}, ReLU: true}
		require.NoError(t, GemmFloat32(2, nil, 0, 7, pb, ep, out, 3))
		require.Equal(t, []float32{1, 0, 3, 1, 0, 3}, out)
		require.NoError(t, GemmInt32(0, nil, 0, 0, pb, nil, 3))
		pb0, err := PackB(4, 0, nil, 0)
		require.NoError(t, err)
		require.NoError(t, GemmInt32(2, make([]uint8, 8), 4, 0, pb0, nil, 0))
	})
}

func TestNoAllocAfterWarmup(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 7))
	const m, n, k = 33, 70, 90
	a, lda, b, ldb := operands(rng, m, n, k, 0, 0)
	pb, err := PackB(k, n, b, ldb)
	require.NoError(t, err)
	scales := make([]float32, n)
	for j := range scales {
		scales[j] = 0.01
	}
	ep := &Epilogue{ScaleA: 0.1, ScaleB: scales}
	out := make([]float32, m*n)
	require.NoError(t, GemmFloat32(m, a, lda, 3, pb, ep, out, n))
	allocs := testing.AllocsPerRun(20, func() {
		_ = GemmFloat32(m, a, lda, 3, pb, ep, out, n)
	})
	require.Zero(t, allocs)
}

func TestChoose(t *testing.T) {
	ks, _, err := choose("go")
	require.NoError(t, err)
	require.Same(t, goKernels, ks)
	ks, _, err = choose("")
	require.NoError(t, err)
	if avx2Kernels != nil {
		require.Same(t, avx2Kernels, ks)
	} else {
		require.Same(t, goKernels, ks)
	}
	_, _, err = choose("vnni")
	require.ErrorContains(t, err, `PLUMB_QGEMM="vnni": want avx2 or go`)
	name, why := Path()
	require.NotEmpty(t, why)
	require.Contains(t, []string{"avx2", "go"}, name)
}

// TestDequantRow checks the float32 epilogue of every path, assembly
// groups of eight and Go tails, against the formula, exactly: the
// explicit float32 conversion rounds the product before the bias is
// added, as both implementations do. A NaN bias gives NaN, and 0 under
// ReLU.
func TestDequantRow(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(35, 9))
		for n := 1; n <= 37; n++ {
			acc, corr := make([]int32, n), make([]int32, n)
			scale, bias, out := make([]float32, n), make([]float32, n), make([]float32, n)
			for j := range n {
				acc[j], corr[j] = rng.Int32N(1<<20)-1<<19, rng.Int32N(1<<12)-1<<11
				scale[j], bias[j] = rng.Float32()*1e-3, rng.Float32()-0.5
			}
			bias[n/2] = float32(nan())
			for _, relu := range []bool{false, true} {
				for _, withBias := range []bool{false, true} {
					e := &Epilogue{ReLU: relu}
					if withBias {
						e.Bias = bias
					}
					e.dequantRow(active, acc, corr, scale, out)
					for j := range n {
						want := float32(scale[j] * float32(acc[j]-corr[j]))
						if withBias {
							want += bias[j]
						}
						if relu && !(want > 0) {
							want = 0
						}
						if want != want {
							require.True(t, out[j] != out[j], "n=%d j=%d relu=%v bias=%v: want NaN, got %v", n, j, relu, withBias, out[j])
							continue
						}
						require.Equal(t, want, out[j], "n=%d j=%d relu=%v bias=%v", n, j, relu, withBias)
					}
				}
			}
		}
	})
}
