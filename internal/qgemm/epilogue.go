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
// float32 first, then multiplies float32(acc), as ONNX Runtime's
// requantize epilogue does.
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

// dequantRow writes the float32 epilogue of one row of sums into out.
func (e *Epilogue) dequantRow(acc []int32, out []float32) {
	out = out[:len(acc)]
	scales := e.ScaleB[:len(acc)]
	for j, v := range acc {
		f := e.ScaleA * scales[j] * float32(v)
		if e.Bias != nil {
			f += e.Bias[j]
		}
		if e.ReLU && !(f > 0) {
			f = 0
		}
		out[j] = f
	}
}

// requantRow writes the int8 epilogue of one row of sums into out, with
// tmp (len(acc) float32s) for the dequantized values.
func (e *Epilogue) requantRow(acc []int32, rq Requant, tmp []float32, out []int8) {
	e.dequantRow(acc, tmp)
	out = out[:len(acc)]
	for j, v := range tmp[:len(acc)] {
		out[j] = QuantizeLinear(v, rq.Scale, rq.Zero)
	}
}

// QuantizeLinear returns ONNX QuantizeLinear's int8 value of v:
// saturate(round(v / scale) + zero), with round half to even and
// saturation to [-128, 127]. NaN, which the spec leaves undefined, gives
// the zero point.
func QuantizeLinear(v, scale float32, zero int8) int8 {
	r := math.RoundToEven(float64(v / scale))
	if r != r {
		return zero
	}
	q := r + float64(zero)
	switch {
	case q <= -128:
		return -128
	case q >= 127:
		return 127
	}
	return int8(q)
}
