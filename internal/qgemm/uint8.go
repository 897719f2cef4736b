package qgemm

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
	return uint8(quantizeLinear(v, scale, float64(zero), 0, 255))
}

// roundMagic is 1.5·2^23: adding it to a float32 t with |t| < 2^22 and
// subtracting it again rounds t to an integer, half to even, in the FPU's
// default rounding mode (the float32 sum has no bits below the units).
const roundMagic = 0x1.8p23

// GemmUint8 computes the product requantized to uint8, the activation
// format of the next product's A, with no float32 tensor in between (the
// requantize fused into the producer's output):
//
//	out[i][j] = saturate(round(acc[i][j]·M[j] + B[j]) + rq.Zero), then max(·, rq.Zero) with ReLU
//	M[j] = ep.ScaleA·ep.ScaleB[j]/rq.Scale,  B[j] = ep.Bias[j]/rq.Scale
//
// with acc = Σ_p (A[i][p] − zpA)·B[p][j], rounding half to even and
// saturating to [0, 255]. This is the requantization of ONNX Runtime's
// QLinearConv (MlasRequantizeOutput) and FBGEMM (one float multiplier per
// output channel): QuantizeLinear(ep(acc), rq.Scale, rq.Zero) with the
// division by the output scale folded into the multiplier, so the two
// may differ by one step where ep(acc)/rq.Scale lies within float32
// round-off of a half. ReLU clamps at the zero point, the quantized 0.
func GemmUint8(m int, a []uint8, lda int, zpA uint8, pb *PackedB, ep *Epilogue, rq RequantU8, out []uint8, ldo int) error {
	if err := checkRequant("GemmUint8", m, a, lda, pb, ep, rq.Scale, ldo, len(out)); err != nil {
		return err
	}
	n := pb.n
	np := ceilDiv(n, nr) * nr
	first := true
	run(m, a, lda, zpA, pb, ep, 2*np, func(ws *workspace, i0, rows int, sums []int32, ld int) {
		mul, add := ws.tmp[:np], ws.tmp[np:2*np]
		if first { // per column, padded with zeros to whole panels
			first = false
			ws.corrP = grow(ws.corrP, np)
			clear(ws.corrP[n:])
			clear(mul[n:])
			clear(add[n:])
			copy(ws.corrP, ws.corr[:n])
			for j := range n {
				mul[j], add[j] = RequantMultiplier(ep.ScaleA, ep.ScaleB[j], rq.Scale), 0
				if ep.Bias != nil {
					add[j] = ep.Bias[j] / rq.Scale
				}
			}
		}
		lo := uint8(0)
		if ep.ReLU {
			lo = rq.Zero
		}
		if ws.ks.requant != nil && ld == np {
			ws.u8 = grow(ws.u8, rows*np)
			ws.ks.requant(rows, sums[:rows*np], ws.corrP, mul, add, rq.Zero, lo, ws.u8)
			for r := range rows {
				copy(out[(i0+r)*ldo:][:n], ws.u8[r*np:][:n])
			}
			return
		}
		for r := range rows {
			requantizeRow(sums[r*ld:r*ld+n], ws.corr[:n], mul, add, rq.Zero, lo, out[(i0+r)*ldo:])
		}
	})
	return nil
}

// RequantMultiplier returns GemmUint8's M = scaleA·scaleB/scaleOut, in
// float32, in that order.
func RequantMultiplier(scaleA, scaleB, scaleOut float32) float32 {
	return scaleA * scaleB / scaleOut
}

// requantizeRow writes one row of GemmUint8's output: out[j] =
// max(saturate(round((acc[j] − corr[j])·mul[j] + add[j]) + zero), lo).
// The rounding is half to even by roundMagic where the value is small
// enough (every value that does not saturate); beyond, it saturates by
// sign, and NaN (from an infinite multiplier only) gives 0, as the
// assembly's clamp does.
func requantizeRow(acc, corr []int32, mul, add []float32, zero, lo uint8, out []uint8) {
	n := len(acc)
	corr, mul, add, out = corr[:n], mul[:n], add[:n], out[:n]
	z := int32(zero)
	l := int32(lo)
	for j, v := range acc {
		t := float32(v-corr[j])*mul[j] + add[j]
		var q int32
		switch {
		case t > -1<<20 && t < 1<<20:
			q = int32((t+roundMagic)-roundMagic) + z
		case t > 0:
			q = 255
		default: // below, or NaN
			q = 0
		}
		out[j] = uint8(min(max(q, l, 0), 255))
	}
}
