package qgemm

import (
	"fmt"
	"math"
)

// QuantizeWeights quantizes W (k×n, row stride ldw, column j the weights
// of output channel j) symmetrically per column into the 7-bit range the
// kernels take (doc.go): scale[j] = max_p |W[p][j]| / 63 and q =
// saturate(round(w / scale[j])) in [-63, 63], rounding half to even as
// ONNX QuantizeLinear does (zero point 0). A column of zeros gets scale 1.
// q is k×n, rows contiguous. It returns an error for a NaN or infinite
// weight, naming it.
func QuantizeWeights(k, n int, w []float32, ldw int) (q []int8, scale []float32, err error) {
	switch {
	case k < 0 || n < 0:
		return nil, nil, fmt.Errorf("qgemm: QuantizeWeights: negative shape k=%d n=%d", k, n)
	case k > 0 && n > 0 && (ldw < n || len(w) < (k-1)*ldw+n):
		return nil, nil, fmt.Errorf("qgemm: QuantizeWeights: W [%d, %d] with row stride %d needs %d elements and a stride of at least %d, have %d elements", k, n, ldw, (k-1)*ldw+n, n, len(w))
	}
	scale = make([]float32, n)
	for p := range k {
		for j, v := range w[p*ldw : p*ldw+n] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("qgemm: QuantizeWeights: W[%d][%d] = %v, want a finite number", p, j, v)
			}
			scale[j] = max(scale[j], float32(math.Abs(float64(v))))
		}
	}
	for j, s := range scale {
		scale[j] = s / MaxWeight
		if s == 0 {
			scale[j] = 1
		}
	}
	q = make([]int8, k*n)
	for p := range k {
		for j, v := range w[p*ldw : p*ldw+n] {
			r := math.RoundToEven(float64(v / scale[j]))
			q[p*n+j] = int8(min(max(r, -MaxWeight), MaxWeight))
		}
	}
	return q, scale, nil
}

// DynamicQuantizeLinear quantizes x into q (len(x) bytes) as ONNX's
// DynamicQuantizeLinear does, the per-tensor activation quantization of
// dynamic quantization: scale = (max(x, 0) − min(x, 0)) / 255, zero =
// saturate(round(−min(x, 0) / scale)) and q = saturate(round(x / scale) +
// zero), rounding half to even and saturating to [0, 255]. An x of zeros
// (where the spec's scale would be 0) gets scale 1 and zero point 0. It
// returns an error for a NaN or infinite element.
func DynamicQuantizeLinear(x []float32, q []uint8) (scale float32, zero uint8, err error) {
	if len(q) < len(x) {
		return 0, 0, fmt.Errorf("qgemm: DynamicQuantizeLinear: %d bytes for %d values", len(q), len(x))
	}
	var lo, hi float32
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, 0, fmt.Errorf("qgemm: DynamicQuantizeLinear: element %d is %v, want a finite number", i, v)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	scale = (hi - lo) / 255
	if scale == 0 {
		scale = 1
	}
	zero = uint8(min(max(math.RoundToEven(float64(-lo/scale)), 0), 255))
	for i, v := range x {
		r := math.RoundToEven(float64(v/scale)) + float64(zero)
		q[i] = uint8(min(max(r, 0), 255))
	}
	return scale, zero, nil
}

// LinearDynamic computes out = x·W + bias for x (m×k float32, rows
// contiguous) with W quantized per output channel (pb packed from
// QuantizeWeights's q, wScale its scales) and x quantized per call
// (DynamicQuantizeLinear over the m×k values): the dynamically quantized
// linear layer of PyTorch's quantize_dynamic and ONNX Runtime's dynamic
// quantization (DynamicQuantizeLinear, then MatMulInteger, then the
// scales). qbuf holds the quantized x (m·k bytes at least). bias may be
// nil.
func LinearDynamic(m int, x []float32, pb *PackedB, wScale, bias []float32, qbuf []uint8, out []float32, ldo int) error {
	const op = "LinearDynamic"
	if pb == nil {
		return fmt.Errorf("qgemm: %s: nil packed weights", op)
	}
	k := pb.k
	switch {
	case m < 0:
		return fmt.Errorf("qgemm: %s: negative row count m=%d", op, m)
	case len(x) != m*k:
		return fmt.Errorf("qgemm: %s: x has %d elements, want [%d, %d] = %d", op, len(x), m, k, m*k)
	case len(qbuf) < m*k:
		return fmt.Errorf("qgemm: %s: %d bytes of buffer for x's %d values", op, len(qbuf), m*k)
	}
	q := qbuf[:m*k]
	sx, zp, err := DynamicQuantizeLinear(x, q)
	if err != nil {
		return fmt.Errorf("qgemm: %s: %w", op, err)
	}
	return GemmFloat32(m, q, k, zp, pb, &Epilogue{ScaleA: sx, ScaleB: wScale, Bias: bias}, out, ldo)
}
