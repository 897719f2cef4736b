package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// randSlice returns n seeded normal values times scale as a []T.
func randSlice[T tensor.Float](seed uint64, n int, scale float64) []T {
	out := make([]T, n)
	for i, v := range randn(seed, n).Float64s() {
		out[i] = T(v * scale)
	}
	return out
}

// fusedTol is how far a fused kernel may be from the plain one: float64
// round-off of reordered sums, or in float32 a few ulps (the vector
// exponential's two and the float32 subtraction of the max).
func fusedTol[T tensor.Float]() (atol, rtol float64) {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1e-6, 4e-6
	}
	return 1e-14, 1e-12
}

// requireSlicesClose checks got against want elementwise within
// atol + rtol·|want|.
func requireSlicesClose[T tensor.Float](t *testing.T, what string, want, got []T, atol, rtol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i, w := range want {
		d, aw := float64(got[i])-float64(w), float64(w)
		if d < 0 {
			d = -d
		}
		if aw < 0 {
			aw = -aw
		}
		if !(d <= atol+rtol*aw) { // testify per element would dominate the test's time
			require.LessOrEqualf(t, d, atol+rtol*aw, "%s element %d: want %v, got %v", what, i, w, got[i])
		}
	}
}

func TestFusedSoftmaxMatchesReference(t *testing.T) {
	t.Run("float64", testFusedSoftmax[float64])
	t.Run("float32", testFusedSoftmax[float32])
}

func testFusedSoftmax[T tensor.Float](t *testing.T) {
	atol, rtol := fusedTol[T]()
	for _, s := range [][3]int{{1, 1, 1}, {3, 17, 1}, {513, 513, 1}, {17, 127, 3}, {3, 127, 513}, {1, 3, 127}, {513, 3, 1}} {
		outer, n, inner := s[0], s[1], s[2]
		size := outer * n * inner
		x, dy := randSlice[T](uint64(size), size, 4), randSlice[T](uint64(size)+1, size, 1)
		for _, log := range []bool{false, true} {
			name := "softmax"
			if log {
				name = "log_softmax"
			}
			y, want := make([]T, size), make([]T, size)
			softmaxKernel(x, y, outer, n, inner, log)
			refSoftmaxKernel(x, want, outer, n, inner, log)
			requireSlicesClose(t, name, want, y, atol, rtol)
			dx, wantDx := make([]T, size), make([]T, size)
			softmaxGrad(name, want, dy, dx, outer, n, inner)
			refSoftmaxGrad(name, want, dy, wantDx, outer, n, inner)
			requireSlicesClose(t, name+" grad", wantDx, dx, atol, rtol)
		}
	}
}

func TestFusedSoftmaxCrossEntropyMatchesReference(t *testing.T) {
	t.Run("float64", testFusedXent[float64])
	t.Run("float32", testFusedXent[float32])
}

func testFusedXent[T tensor.Float](t *testing.T) {
	atol, rtol := fusedTol[T]()
	for _, s := range [][2]int{{1, 1}, {3, 17}, {513, 513}, {513, 3}, {1, 127}} {
		n, c := s[0], s[1]
		z := randSlice[T](uint64(n*c), n*c, 4)
		labels := make([]int, n)
		for i := range labels {
			labels[i] = (i * 7) % c
		}
		w := randn(uint64(n), n).Float64s()
		for _, soft := range []bool{false, true} {
			var y []T
			if soft {
				y = randSlice[T](uint64(n*c)+1, n*c, 1)
				for i := range y {
					y[i] = y[i] * y[i] // non-negative, rows not normalised
				}
			}
			rowMax, logSum, loss := make([]float64, n), make([]float64, n), make([]float64, n)
			wm, wl, wloss := make([]float64, n), make([]float64, n), make([]float64, n)
			xentKernel(z, y, labels, n, c, rowMax, logSum, loss)
			refXentKernel(z, y, labels, n, c, wm, wl, wloss)
			requireSlicesClose(t, "max", wm, rowMax, 0, 0)
			requireSlicesClose(t, "log-sum-exp", wl, logSum, atol, rtol)
			requireSlicesClose(t, "loss", wloss, loss, atol, rtol)
			dz, wdz := make([]T, n*c), make([]T, n*c)
			var dy, wdy []T
			if soft {
				dy, wdy = make([]T, n*c), make([]T, n*c)
			}
			xentGrad(z, y, labels, n, c, wm, wl, w, dz, dy)
			refXentGrad(z, y, labels, n, c, wm, wl, w, wdz, wdy)
			requireSlicesClose(t, "dz", wdz, dz, atol, rtol)
			requireSlicesClose(t, "dlabels", wdy, dy, atol, rtol)
		}
	}
}

func TestFusedLayerNormMatchesReference(t *testing.T) {
	t.Run("float64", testFusedLayerNorm[float64])
	t.Run("float32", testFusedLayerNorm[float32])
}

func testFusedLayerNorm[T tensor.Float](t *testing.T) {
	atol, rtol := fusedTol[T]()
	for _, s := range [][2]int{{1, 1}, {3, 17}, {513, 513}, {513, 3}, {17, 127}} {
		rows, d := s[0], s[1]
		x, dy := randSlice[T](uint64(rows*d), rows*d, 3), randSlice[T](uint64(rows*d)+1, rows*d, 1)
		gamma, beta := randSlice[T](uint64(d)+2, d, 1), randSlice[T](uint64(d)+3, d, 1)
		for i := range x { // a mean away from zero
			x[i] += 5
		}
		y, wy := make([]T, rows*d), make([]T, rows*d)
		mean, inv, wmean, winv := make([]float64, rows), make([]float64, rows), make([]float64, rows), make([]float64, rows)
		layerNormKernel(x, gamma, beta, y, d, 1e-3, mean, inv)
		refLayerNormKernel(x, gamma, beta, wy, d, 1e-3, wmean, winv)
		requireSlicesClose(t, "y", wy, y, atol, rtol)
		requireSlicesClose(t, "mean", wmean, mean, 1e-15, 1e-13)
		requireSlicesClose(t, "inverse std", winv, inv, 1e-15, 1e-13)
		dx, dg, db := make([]T, rows*d), make([]T, d), make([]T, d)
		wdx, wdg, wdb := make([]T, rows*d), make([]T, d), make([]T, d)
		layerNormGrad(x, gamma, dy, dx, dg, db, d, wmean, winv)
		refLayerNormGrad(x, gamma, dy, wdx, wdg, wdb, d, wmean, winv)
		requireSlicesClose(t, "dx", wdx, dx, atol, rtol)
		requireSlicesClose(t, "dgamma", wdg, dg, atol, rtol)
		requireSlicesClose(t, "dbeta", wdb, db, atol, rtol)
	}
}

func TestFusedBatchNormMatchesReference(t *testing.T) {
	t.Run("float64", testFusedBatchNorm[float64])
	t.Run("float32", testFusedBatchNorm[float32])
}

func testFusedBatchNorm[T tensor.Float](t *testing.T) {
	atol, rtol := fusedTol[T]()
	for _, s := range [][3]int{{1, 1, 1}, {3, 17, 1}, {17, 3, 127}, {127, 3, 513}, {3, 127, 17}} {
		n, c, hw := s[0], s[1], s[2]
		size := n * c * hw
		x, dy := randSlice[T](uint64(size), size, 3), randSlice[T](uint64(size)+1, size, 1)
		gamma, beta := randSlice[T](uint64(c)+2, c, 1), randSlice[T](uint64(c)+3, c, 1)
		for _, training := range []bool{true, false} {
			a := BatchNormAttrs{Momentum: 0.9, Epsilon: 1e-3, Training: training}
			rm, rv := randSlice[T](7, c, 1), randSlice[T](8, c, 1)
			for i := range rv {
				rv[i] = rv[i]*rv[i] + 0.5
			}
			wrm, wrv := append([]T(nil), rm...), append([]T(nil), rv...)
			y, wy := make([]T, size), make([]T, size)
			mean, inv, wmean, winv := make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
			batchNormKernel(x, gamma, beta, rm, rv, y, n, c, hw, a, mean, inv)
			refBatchNormKernel(x, gamma, beta, wrm, wrv, wy, n, c, hw, a, wmean, winv)
			requireSlicesClose(t, "y", wy, y, atol, rtol)
			requireSlicesClose(t, "moving mean", wrm, rm, atol, rtol)
			requireSlicesClose(t, "moving variance", wrv, rv, atol, rtol)
			requireSlicesClose(t, "mean", wmean, mean, 1e-15, 1e-13)
			requireSlicesClose(t, "inverse std", winv, inv, 1e-15, 1e-13)
			dx, dg, db := make([]T, size), make([]T, c), make([]T, c)
			wdx, wdg, wdb := make([]T, size), make([]T, c), make([]T, c)
			batchNormGrad(x, gamma, dy, dx, dg, db, n, c, hw, training, wmean, winv)
			refBatchNormGrad(x, gamma, dy, wdx, wdg, wdb, n, c, hw, training, wmean, winv)
			requireSlicesClose(t, "dx", wdx, dx, atol, rtol)
			requireSlicesClose(t, "dgamma", wdg, dg, atol, rtol)
			requireSlicesClose(t, "dbeta", wdb, db, atol, rtol)
		}
	}
}

// BenchmarkFusedKernels times forward plus backward of each fused kernel
// ("fused") and of the kernel it replaced ("plain", fused_ref_test.go) on
// the same float32 data in one run, with the CPU time of all cores
// together (cpu-ns/op) beside the wall time.
func BenchmarkFusedKernels(b *testing.B) {
	type kernels struct{ fused, plain func() }
	cases := []struct {
		name string
		mk   func() kernels
	}{
		{"softmax_1024x1000", func() kernels { return softmaxBench(1024, 1000, 1, false) }},
		{"log_softmax_1024x1000", func() kernels { return softmaxBench(1024, 1000, 1, true) }},
		{"softmax_axis1_16x128x512", func() kernels { return softmaxBench(16, 128, 512, false) }},
		{"xent_1024x1000", func() kernels {
			n, c := 1024, 1000
			z := randSlice[float32](1, n*c, 4)
			labels := make([]int, n)
			for i := range labels {
				labels[i] = i % c
			}
			w := randn(2, n).Float64s()
			m, l, loss, dz := make([]float64, n), make([]float64, n), make([]float64, n), make([]float32, n*c)
			return kernels{
				func() { xentKernel(z, nil, labels, n, c, m, l, loss); xentGrad(z, nil, labels, n, c, m, l, w, dz, nil) },
				func() {
					refXentKernel(z, nil, labels, n, c, m, l, loss)
					refXentGrad(z, nil, labels, n, c, m, l, w, dz, nil)
				},
			}
		}},
		{"layer_norm_4096x512", func() kernels {
			rows, d := 4096, 512
			x, dy, y, dx := randSlice[float32](1, rows*d, 1), randSlice[float32](2, rows*d, 1), make([]float32, rows*d), make([]float32, rows*d)
			g, bt, dg, db := randSlice[float32](3, d, 1), randSlice[float32](4, d, 1), make([]float32, d), make([]float32, d)
			mean, inv := make([]float64, rows), make([]float64, rows)
			return kernels{
				func() {
					layerNormKernel(x, g, bt, y, d, 1e-3, mean, inv)
					layerNormGrad(x, g, dy, dx, dg, db, d, mean, inv)
				},
				func() {
					refLayerNormKernel(x, g, bt, y, d, 1e-3, mean, inv)
					refLayerNormGrad(x, g, dy, dx, dg, db, d, mean, inv)
				},
			}
		}},
		{"batch_norm_32x64x32x32", func() kernels {
			n, c, hw := 32, 64, 32*32
			x, dy, y, dx := randSlice[float32](1, n*c*hw, 1), randSlice[float32](2, n*c*hw, 1), make([]float32, n*c*hw), make([]float32, n*c*hw)
			g, bt, dg, db := randSlice[float32](3, c, 1), randSlice[float32](4, c, 1), make([]float32, c), make([]float32, c)
			rm, rv := make([]float32, c), make([]float32, c)
			mean, inv := make([]float64, c), make([]float64, c)
			a := BatchNormAttrs{Momentum: 0.99, Epsilon: 1e-3, Training: true}
			return kernels{
				func() {
					batchNormKernel(x, g, bt, rm, rv, y, n, c, hw, a, mean, inv)
					batchNormGrad(x, g, dy, dx, dg, db, n, c, hw, true, mean, inv)
				},
				func() {
					refBatchNormKernel(x, g, bt, rm, rv, y, n, c, hw, a, mean, inv)
					refBatchNormGrad(x, g, dy, dx, dg, db, n, c, hw, true, mean, inv)
				},
			}
		}},
	}
	for _, tc := range cases {
		k := tc.mk()
		b.Run(tc.name+"/fused", func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				k.fused()
			}
			reportCPU(b, cpu)
		})
		b.Run(tc.name+"/plain", func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				k.plain()
			}
			reportCPU(b, cpu)
		})
	}
}

// softmaxBench returns forward+backward of the fused and the plain
// softmax (or log-softmax) kernels on float32 [outer, n, inner].
func softmaxBench(outer, n, inner int, log bool) struct{ fused, plain func() } {
	size := outer * n * inner
	x, dy, y, dx := randSlice[float32](1, size, 4), randSlice[float32](2, size, 1), make([]float32, size), make([]float32, size)
	name := "softmax"
	if log {
		name = "log_softmax"
	}
	return struct{ fused, plain func() }{
		func() { softmaxKernel(x, y, outer, n, inner, log); softmaxGrad(name, y, dy, dx, outer, n, inner) },
		func() { refSoftmaxKernel(x, y, outer, n, inner, log); refSoftmaxGrad(name, y, dy, dx, outer, n, inner) },
	}
}
