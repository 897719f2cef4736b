package ops

import "github.com/plumbml/plumb/tensor"

// The row reductions of the fused norm kernels. A float64 sum in one
// accumulator waits on each add's latency (4 cycles); four independent
// accumulators, added at the end, let the adds overlap.

// sumRow returns Σ x in float64.
func sumRow[T tensor.Float](x []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
	}
	for _, v := range x[i:] {
		s0 += float64(v)
	}
	return (s0 + s1) + (s2 + s3)
}

// sumSqDev returns Σ (x - mu)² in float64.
func sumSqDev[T tensor.Float](x []T, mu float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		d0, d1, d2, d3 := float64(v[0])-mu, float64(v[1])-mu, float64(v[2])-mu, float64(v[3])-mu
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for _, v := range x[i:] {
		d := float64(v) - mu
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}
