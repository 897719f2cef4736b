package qgemm

import (
	"fmt"
	"math"
)

// RequantU8 is a uint8 output's quantization, as ONNX QuantizeLinear
// applies it with a uint8 zero point: q = saturate(round(v / Scale) +
// Zero), rounding half to even and saturating to [0, 255]. It is the
// activation format the kernels read (A is uint8 with a zero point), so a
// product requantized to uint8 feeds the next int8 product directly.
type RequantU8 struct {
	Scale float32
	Zero  uint8
}

// QuantizeLinearU8 returns ONNX QuantizeLinear's uint8 value of v:
// saturate(round(v / scale) + zero), with round half to even and
// saturation to [0, 255]. NaN, which the spec leaves undefined, gives the
// zero point.
func QuantizeLinearU8(v, scale float32, zero uint8) uint8 {
	r := math.RoundToEven(float64(v / scale))
	if r != r {
		return zero
	}
	q := r + float64(zero)
	switch {
	case q <= 0:
		return 0
	case q >= 255:
		return 255
	}
	return uint8(q)
}

// requantRowU8 quantizes one row of dequantized values into out.
func requantRowU8(v []float32, rq RequantU8, out []uint8) {
	out = out[:len(v)]
	for j, x := range v {
		out[j] = QuantizeLinearU8(x, rq.Scale, rq.Zero)
	}
}

// GemmUint8 computes out[i*ldo+j] = QuantizeLinearU8(ep(Σ_p (A[i][p] −
// zpA)·B[p][j]), rq.Scale, rq.Zero): the product requantized to uint8,
// the activation format of the next product's A, with no float32 tensor
// in between (the requantize fused into the producer's output).
func GemmUint8(m int, a []uint8, lda int, zpA uint8, pb *PackedB, ep *Epilogue, rq RequantU8, out []uint8, ldo int) error {
	const op = "GemmUint8"
	if err := checkArgs(op, m, a, lda, pb); err != nil {
		return err
	}
	if err := ep.check(op, pb.n); err != nil {
		return err
	}
	if !finitePositive(rq.Scale) {
		return fmt.Errorf("qgemm: %s: output scale %v, want a finite positive number", op, rq.Scale)
	}
	if err := checkOut(op, m, pb.n, ldo, len(out)); err != nil {
		return err
	}
	run(m, a, lda, zpA, pb, ep, pb.n, func(ws *workspace, i0, rows int, sums []int32, ld int) {
		for r := range rows {
			ep.dequantRow(ws.ks, sums[r*ld:r*ld+pb.n], ws.corr, ws.scale, ws.tmp)
			requantRowU8(ws.tmp, rq, out[(i0+r)*ldo:])
		}
	})
	return nil
}
