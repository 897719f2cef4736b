package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// lengths are odd sizes around the assembly's 8- and 32-value rounds.
var lengths = []int{0, 1, 3, 7, 8, 9, 17, 31, 32, 33, 127, 513}

// TestMatchGo checks Add, Sum, AddConst, ShiftTo, SubMul, TanhScoreGrad and the rest against plain loops on every length,
// at an offset that leaves the runs unaligned, with the assembly (where
// this CPU has it) and with the Go loops forced.
func TestMatchGo(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range lengths {
			check[float32](t, rng, n)
			check[float64](t, rng, n)
			checkRelu[float32](t, rng, n)
			checkRelu[float64](t, rng, n)
			checkAxpyDot[float32](t, rng, n)
			checkAxpyDot[float64](t, rng, n)
			checkTanhScoreGrad[float32](t, rng, n)
			checkTanhScoreGrad[float64](t, rng, n)
			for _, rows := range []int{1, 3, 17} {
				// row strides that overlap (below n), touch (n) and leave gaps
				for _, ld := range []int{max(1, n/2), n, n + 5} {
					checkRows[float32](t, rng, rows, n, ld)
					checkRows[float64](t, rng, rows, n, ld)
					checkAxpyDotRows[float32](t, rng, rows, n, ld)
					checkAxpyDotRows[float64](t, rng, rows, n, ld)
				}
			}
		}
	})
}

// bothPaths runs f with the assembly loops (where this CPU has them) and
// again with the Go loops forced.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	for _, forceGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("forceGo=%v", forceGo), func(t *testing.T) {
			if forceGo {
				old := hasAVX
				setAVX(false)
				t.Cleanup(func() { setAVX(old) })
			}
			f(t)
		})
	}
}

func check[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	src, dst := make([]T, n+1), make([]T, n+3)
	for i := range src {
		src[i] = T(rng.NormFloat64())
	}
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	want := append([]T(nil), dst...)
	for i := range n {
		want[i+1] += src[i+1]
	}
	got := append([]T(nil), dst...)
	Add(got[1:n+1], src[1:])
	require.Equal(t, want, got, "Add n=%d", n)

	v := T(rng.NormFloat64())
	for i := range n {
		want[i+1] += v
	}
	AddConst(got[1:n+1], v)
	require.Equal(t, want, got, "AddConst n=%d", n)

	// Two shifts in one pass equal two AddConst passes to the bit.
	w2 := make([]T, n+2)
	b := T(rng.NormFloat64() * 1e-3)
	twice := append(make([]T, 0, n), got[1:n+1]...)
	AddConst(twice, v)
	AddConst(twice, b)
	ShiftTo(w2[2:], got[1:n+1], v, b)
	require.Equal(t, twice, w2[2:], "ShiftTo n=%d", n)
	require.Equal(t, []T{0, 0}, w2[:2], "ShiftTo wrote before its run n=%d", n)

	// SubMul against the loop, on an unaligned run with its neighbours kept.
	sm := append([]T(nil), dst...)
	wantSM := append([]T(nil), sm...)
	d := T(rng.NormFloat64())
	for i := range n {
		wantSM[i+1] = src[i] * (sm[i+1] - d)
	}
	SubMul(sm[1:n+1], src, d)
	require.Equal(t, wantSM, sm, "SubMul n=%d", n)

	// Sum into a third run, unaligned, leaving its neighbours alone.
	a := append([]T(nil), dst...)
	sum := make([]T, n+4)
	for i := range sum {
		sum[i] = T(rng.NormFloat64())
	}
	wantSum := append([]T(nil), sum...)
	for i := range n {
		wantSum[i+2] = a[i+1] + src[i+1]
	}
	Sum(sum[2:n+2], a[1:], src[1:n+1])
	require.Equal(t, wantSum, sum, "Sum n=%d", n)
	require.Equal(t, dst, a, "Sum must leave its inputs alone n=%d", n)
}

// checkRows checks AddRows with dst rows ld apart (overlapping when ld <
// n) and CopyRows with src rows ld apart, against row-by-row loops.
func checkRows[T tensor.Float](t *testing.T, rng *rand.Rand, rows, n, ld int) {
	if n == 0 {
		AddRows[T](nil, ld, nil, n, rows, n) // nothing to touch
		CopyRows[T](nil, n, nil, ld, rows, n)
		return
	}
	span := (rows-1)*ld + n
	src, dst := make([]T, rows*n+2), make([]T, span+3)
	for i := range src {
		src[i] = T(rng.NormFloat64())
	}
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	want := append([]T(nil), dst...)
	for r := range rows {
		for j := range n {
			want[1+r*ld+j] += src[1+r*n+j]
		}
	}
	got := append([]T(nil), dst...)
	AddRows(got[1:], ld, src[1:], n, rows, n)
	require.Equal(t, want, got, "AddRows rows=%d n=%d ldd=%d", rows, n, ld)

	wide := make([]T, span+2) // src rows ld apart
	for i := range wide {
		wide[i] = T(rng.NormFloat64())
	}
	want = append([]T(nil), src...)
	for r := range rows {
		copy(want[1+r*n:1+(r+1)*n], wide[1+r*ld:])
	}
	got = append([]T(nil), src...)
	CopyRows(got[1:], n, wide[1:], ld, rows, n)
	require.Equal(t, want, got, "CopyRows rows=%d n=%d lds=%d", rows, n, ld)
}

// checkRelu checks Relu and ReluGrad bit for bit against the definitions,
// on random values mixed with ±0, ±Inf and NaN in both x and the gradient.
func checkRelu[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	draw := func() T {
		if rng.IntN(4) == 0 {
			return T(special[rng.IntN(len(special))])
		}
		return T(rng.NormFloat64())
	}
	x, g := make([]T, n+1), make([]T, n+1)
	for i := range x {
		x[i], g[i] = draw(), draw()
	}
	want, got := make([]T, n), make([]T, n)
	for i, v := range x[1:] {
		want[i] = v
		if v < 0 {
			want[i] = 0
		}
	}
	Relu(got, x[1:])
	requireBits(t, want, got, "Relu n=%d", n)
	for i, v := range x[1:] {
		want[i] = 0
		if v > 0 {
			want[i] = g[1+i]
		}
	}
	ReluGrad(got, g[1:], x[1:])
	requireBits(t, want, got, "ReluGrad n=%d", n)
}

// requireBits requires want and got to hold the same bits (NaN and the
// sign of zero included).
func requireBits[T tensor.Float](t *testing.T, want, got []T, msg string, args ...any) {
	t.Helper()
	for i := range want {
		w, g := math.Float64bits(float64(want[i])), math.Float64bits(float64(got[i]))
		if math.IsNaN(float64(want[i])) && math.IsNaN(float64(got[i])) {
			continue
		}
		require.Equalf(t, w, g, msg+" element %d: want %v got %v", append(args, i, want[i], got[i])...)
	}
}

// updateMatchesGo runs an optimizer's update on the same float32 state
// (nslots slices: the parameters first, the last one squared so that it
// is never negative, like a squared-gradient accumulator) through the
// assembly and through the Go loop (forced), for several steps on every
// length, and requires the same bits.
func updateMatchesGo(t *testing.T, name string, seed uint64, nslots int, update func(s [][]float32, g []float32, step int)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for _, n := range lengths {
		a := make([][]float32, nslots)
		for k := range a {
			a[k] = make([]float32, n)
			for i := range a[k] {
				a[k][i] = float32(rng.NormFloat64())
			}
		}
		for i := range a[nslots-1] {
			a[nslots-1][i] *= a[nslots-1][i]
		}
		b := make([][]float32, nslots)
		for k := range b {
			b[k] = append([]float32(nil), a[k]...)
		}
		for step := range 3 {
			g := make([]float32, n)
			for i := range g {
				g[i] = float32(rng.NormFloat64())
			}
			update(a, g, step)
			old := hasAVX
			setAVX(false)
			update(b, g, step)
			setAVX(old)
			for k := range a {
				requireBits(t, b[k], a[k], "%s n=%d step %d state %d", name, n, step, k)
			}
		}
	}
}

// The Adagrad assembly gives the Go loop's bits over several steps on
// every length; float64 (Go only) is checked against the formula.
func TestAdagradAssemblyMatchesGo(t *testing.T) {
	updateMatchesGo(t, "Adagrad", 11, 2, func(s [][]float32, g []float32, step int) {
		Adagrad(s[0], g, s[1], float32(3e-3*(1+float64(step))), 1e-7)
	})
	p, g, acc := []float64{1, -2}, []float64{0.5, -3}, []float64{0.1, 0}
	Adagrad(p, g, acc, 0.01, 1e-7)
	for i, gi := range []float64{0.5, -3} {
		ai := []float64{0.1, 0}[i] + gi*gi
		require.InDelta(t, []float64{1, -2}[i]-0.01*gi/math.Sqrt(ai+1e-7), p[i], 1e-15)
		require.InDelta(t, ai, acc[i], 1e-15)
	}
}

// TestAdamAssemblyMatchesGo runs Adam's step through the assembly and
// the Go loop (updateMatchesGo); float64 (Go only) is checked against the
// formula.
func TestAdamAssemblyMatchesGo(t *testing.T) {
	updateMatchesGo(t, "Adam", 9, 3, func(s [][]float32, g []float32, step int) {
		Adam(s[0], g, s[1], s[2], float32(1e-3*(1+float64(step))), 0.9, 0.999, 1e-7)
	})
	p, g, m, v := []float64{1, -2}, []float64{0.5, -3}, []float64{0.1, 0.2}, []float64{0.01, 0.04}
	Adam(p, g, m, v, 0.01, 0.9, 0.999, 1e-7)
	for i, gi := range []float64{0.5, -3} {
		mi := 0.9*[]float64{0.1, 0.2}[i] + 0.1*gi
		vi := 0.999*[]float64{0.01, 0.04}[i] + 0.001*gi*gi
		require.InDelta(t, []float64{1, -2}[i]-0.01*mi/(math.Sqrt(vi)+1e-7), p[i], 1e-15)
		require.InDelta(t, mi, m[i], 1e-15)
		require.InDelta(t, vi, v[i], 1e-15)
	}
}

// checkAxpyDot checks Axpy bit for bit against its loop, and Dot against a
// float64 sum within the round-off of an n-term float sum.
func checkAxpyDot[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	x, dst := make([]T, n+1), make([]T, n+2)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	a := T(rng.NormFloat64())
	want := append([]T(nil), dst...)
	for i := range n {
		want[1+i] += T(a * x[1+i])
	}
	got := append([]T(nil), dst...)
	Axpy(got[1:n+1], x[1:], a)
	requireBits(t, want, got, "Axpy n=%d", n)

	requireDot(t, Dot(x[1:], dst[1:n+1]), x[1:], 0, dst[1:], 0, 1, n)
}

// requireDot requires got to be the dot product of rows×n values of x and
// y (rows ldx and ldy apart) within the round-off of a float sum of
// rows·n terms, |error| <= (rows·n+1)·ε·Σ|x·y|.
func requireDot[T tensor.Float](t *testing.T, got T, x []T, ldx int, y []T, ldy, rows, n int) {
	t.Helper()
	var exact, scale float64
	for r := range rows {
		for j := range n {
			p := float64(x[r*ldx+j]) * float64(y[r*ldy+j])
			exact += p
			scale += math.Abs(p)
		}
	}
	eps := 0x1p-52
	if _, ok := any(got).(float32); ok {
		eps = 0x1p-23
	}
	require.InDelta(t, exact, float64(got), float64(rows*n+1)*eps*scale+1e-300, "dot of %d rows of %d", rows, n)
}

// checkAxpyDotRows checks AxpyRows bit for bit against row-by-row loops
// (dst rows n+2 apart, x rows ld apart, overlapping when ld < n), and
// DotRows against a float64 sum within round-off.
func checkAxpyDotRows[T tensor.Float](t *testing.T, rng *rand.Rand, rows, n, ld int) {
	if n == 0 {
		AxpyRows[T](nil, n, nil, ld, rows, n, 1)
		require.Zero(t, DotRows[T](nil, ld, nil, n, rows, n))
		return
	}
	ldd := n + 2
	x, dst := make([]T, (rows-1)*ld+n+1), make([]T, (rows-1)*ldd+n+1)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	a := T(rng.NormFloat64())
	want := append([]T(nil), dst...)
	for r := range rows {
		for j := range n {
			want[1+r*ldd+j] += T(a * x[1+r*ld+j])
		}
	}
	got := append([]T(nil), dst...)
	AxpyRows(got[1:], ldd, x[1:], ld, rows, n, a)
	requireBits(t, want, got, "AxpyRows rows=%d n=%d ldx=%d", rows, n, ld)

	requireDot(t, DotRows(x[1:], ld, dst[1:], ldd, rows, n), x[1:], ld, dst[1:], ldd, rows, n)
}

// Max agrees with slices.Max on every length, with the largest value in
// every position, and is NaN when a NaN sits anywhere (the assembly keeps
// NaN in every lane and in the tail), with the assembly and without.
func TestMax(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range lengths[1:] {
			for _, at := range []int{0, n / 2, n - 1, min(7, n-1), min(8, n-1)} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				x[at] = 100
				require.Equal(t, slices.Max(x), Max(x), "n %d, max at %d", n, at)
				require.Equal(t, float32(100), Max(x))
				x[at] = float32(math.Inf(-1))
				require.Equal(t, slices.Max(x), Max(x), "n %d, -Inf at %d", n, at)
				x[at] = float32(math.NaN())
				require.True(t, math.IsNaN(float64(Max(x))), "n %d, NaN at %d", n, at)
				x64 := make([]float64, n)
				for i, v := range x {
					x64[i] = float64(v)
				}
				require.True(t, math.IsNaN(Max(x64)), "float64, n %d, NaN at %d", n, at)
			}
		}
	})
}

// TestIndexAbove checks IndexAbove against a plain scan on every length,
// unaligned, for thresholds below, inside and above the values, with NaNs
// among them and as the threshold, on both paths.
func TestIndexAbove(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range lengths {
			checkIndexAbove[float32](t, rng, n)
			checkIndexAbove[float64](t, rng, n)
		}
	})
}

func checkIndexAbove[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	x := make([]T, n+1)
	for i := range x {
		x[i] = T(rng.NormFloat64())
		if i%11 == 5 {
			x[i] = T(math.NaN())
		}
	}
	row := x[1:]
	for _, th := range []float64{-10, -1, 0, 0.5, 1.5, 10, math.Inf(1), math.NaN()} {
		want := len(row)
		for i, v := range row {
			if v > T(th) {
				want = i
				break
			}
		}
		require.Equal(t, want, IndexAbove(row, T(th)), "n=%d t=%v", n, th)
	}
	if n > 0 { // a hit in the last lane of a block and in the tail
		for _, at := range []int{n - 1, min(7, n-1)} {
			y := make([]T, n)
			y[at] = 1
			require.Equal(t, at, IndexAbove(y, 0.5), "n=%d at=%d", n, at)
		}
	}
}

// checkTanhScoreGrad checks TanhScoreGrad against the plain loop, to the
// bit, on unaligned runs whose neighbours it must leave alone; dq and dk
// start apart so that a swap of the two shows.
func checkTanhScoreGrad[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	randn := func(k int) []T {
		x := make([]T, k)
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
		return x
	}
	th, v := randn(n+1), randn(n+2)
	for i := range th {
		th[i] = T(math.Tanh(float64(th[i])))
	}
	dv, dq, dk := randn(n+2), randn(n+3), randn(n+1)
	e := T(rng.NormFloat64())
	wantV, wantQ, wantK := slices.Clone(dv), slices.Clone(dq), slices.Clone(dk)
	for i := range n {
		x := th[i+1]
		wantV[i+1] += e * x
		g := e * v[i+2] * (1 - x*x)
		wantQ[i+2] += g
		wantK[i] += g
	}
	TanhScoreGrad(dv[1:], dq[2:], dk, th[1:], v[2:], e)
	require.Equal(t, wantV, dv, "TanhScoreGrad dv n=%d", n)
	require.Equal(t, wantQ, dq, "TanhScoreGrad dq n=%d", n)
	require.Equal(t, wantK, dk, "TanhScoreGrad dk n=%d", n)
}
