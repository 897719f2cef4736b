package qgemm

import (
	"fmt"
	"math"
)

// Epilogue turns the int32 sums of a product into float32 values:
//
//	out[i][j] = ScaleA·ScaleB[j]·acc[i][j] + Bias[j], then max(·, 0) with ReLU
//
// acc is Σ_p (A[i][p] − zpA)·B[p][j], so this is ONNX's DequantizeLinear
// of the int32 product (scale ScaleA·ScaleB[j], zero point 0) followed by
// the bias add and activation the consumer would apply: the dequantize
// fused into the product's epilogue. ScaleA·ScaleB[j] is formed in
// float32 once per product, then multiplies float32(acc).
type Epilogue struct {
	// ScaleA is the activations' per-tensor scale.
	ScaleA float32
	// ScaleB holds the weights' per-column scales, n of them.
	ScaleB []float32
	// Bias, when not nil, holds n float32 biases.
	Bias []float32
	// ReLU clamps the results at zero.
	ReLU bool
}

// Requant is the int8 output's quantization, as ONNX QuantizeLinear
// applies it: q = saturate(round(v / Scale) + Zero), rounding half to even
// and saturating to [-128, 127].
type Requant struct {
	Scale float32
	Zero  int8
}

// check reports an epilogue that cannot serve n columns.
func (e *Epilogue) check(op string, n int) error {
	if e == nil {
		return fmt.Errorf("qgemm: %s: nil epilogue", op)
	}
	if !finitePositive(e.ScaleA) {
		return fmt.Errorf("qgemm: %s: activation scale %v, want a finite positive number", op, e.ScaleA)
	}
	if len(e.ScaleB) != n {
		return fmt.Errorf("qgemm: %s: %d weight scales for %d columns, want one per column", op, len(e.ScaleB), n)
	}
	for j, s := range e.ScaleB {
		if !finitePositive(s) {
			return fmt.Errorf("qgemm: %s: weight scale %d is %v, want a finite positive number", op, j, s)
		}
	}
	if e.Bias != nil && len(e.Bias) != n {
		return fmt.Errorf("qgemm: %s: %d biases for %d columns, want one per column or none", op, len(e.Bias), n)
	}
	return nil
}

func finitePositive(s float32) bool {
	return s > 0 && !math.IsInf(float64(s), 1)
}

// dequantRow writes the float32 epilogue of one row of raw sums into
// out: scale[j]·(acc[j] − corr[j]) + Bias[j], then the ReLU, where corr
// holds the zero-point corrections zpA·colsum[j] and scale the combined
// scales ScaleA·ScaleB[j]; ks's assembly, where it has one, runs the
// whole groups of eight columns.
func (e *Epilogue) dequantRow(ks *kernels, acc, corr []int32, scale, out []float32) {
	n := len(acc)
	out, corr, scale = out[:n], corr[:n], scale[:n]
	done := 0 // columns the assembly did, ReLU included
	if ks.dequant != nil {
		done = ks.dequant(acc, corr, scale, e.Bias, out, e.ReLU)
	}
	j := done
	if e.Bias == nil {
		for ; j < n; j++ {
			out[j] = scale[j] * float32(acc[j]-corr[j])
		}
	} else {
		bias := e.Bias[:n]
		for ; j < n; j++ {
			out[j] = scale[j]*float32(acc[j]-corr[j]) + bias[j]
		}
	}
	if e.ReLU {
		for j, v := range out[done:] {
			if !(v > 0) {
				out[done+j] = 0
			}
		}
	}
}

// requantRow quantizes one row of dequantized values into out
// (QuantizeLinear).
func requantRow(v []float32, rq Requant, out []int8) {
	out = out[:len(v)]
	for j, x := range v {
		out[j] = QuantizeLinear(x, rq.Scale, rq.Zero)
	}
}

// QuantizeLinear returns ONNX QuantizeLinear's int8 value of v:
// saturate(round(v / scale) + zero), with round half to even and
// saturation to [-128, 127]. NaN, which the spec leaves undefined, gives
// the zero point.
func QuantizeLinear(v, scale float32, zero int8) int8 {
	return int8(quantizeLinear(v, scale, float64(zero), -128, 127))
}

// quantizeLinear is QuantizeLinear into [lo, hi]: round(v / scale) + zero,
// rounding half to even, saturated; NaN gives zero.
func quantizeLinear(v, scale float32, zero, lo, hi float64) float64 {
	r := math.RoundToEven(float64(v / scale))
	if r != r {
		return zero
	}
	return min(max(r+zero, lo), hi)
}
