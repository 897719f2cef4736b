package kpi

import (
	"fmt"
	"time"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ReferenceSize is the side of the reference benchmark's square float32
// matrices: 256×256 products run in the GEMM kernels that training's
// dense and convolution layers use, with the same threads.
const ReferenceSize = 256

// MeasureReference runs the reference benchmark for about d (at least 3
// products) and returns its speed in GFLOP/s: float32 ReferenceSize³
// matrix products through ops.MatMul, 2·n³ flops each, over the whole
// time (not the best round, so that a machine busy for part of it counts
// as slower, as a training run there would be).
func MeasureReference(d time.Duration) (float64, error) {
	n := ReferenceSize
	rng := tensor.NewRNG(1)
	a, b := tensor.Zeros(tensor.Float32, n, n), tensor.Zeros(tensor.Float32, n, n)
	for _, t := range []*tensor.Tensor{a, b} {
		v := t.Float32s()
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
	}
	if _, err := ops.MatMul(a, b, false, false); err != nil { // warm up: pools, packing buffers, threads
		return 0, fmt.Errorf("kpi: reference benchmark: %w", err)
	}
	start := time.Now()
	runs := 0
	for runs < 3 || time.Since(start) < d {
		if _, err := ops.MatMul(a, b, false, false); err != nil {
			return 0, fmt.Errorf("kpi: reference benchmark: %w", err)
		}
		runs++
	}
	sec := time.Since(start).Seconds()
	return 2 * float64(n*n*n) * float64(runs) / sec / 1e9, nil
}
