// Package qgemm multiplies uint8 activations by int8 weights into int32
// sums, with the dequantize and requantize epilogues that quantized
// inference fuses into the product:
//
//	acc[i][j] = Σ_p (A[i][p] − zpA)·B[p][j]
//	          = Σ_p A[i][p]·B[p][j] − zpA·colsum[j]
//
// A (m×k, uint8) is an asymmetric per-tensor activation with zero point
// zpA, B (k×n, int8) a symmetric per-column (per output channel) weight,
// whose column sums are taken once when B is packed (the zero-point
// correction of ONNX's QLinearMatMul and of FBGEMM). The float32 epilogue
// gives scaleA·scaleB[j]·acc + bias[j], then an optional ReLU; the int8
// one requantizes that as ONNX QuantizeLinear does: round half to even,
// add the output zero point, saturate to [-128, 127]. The uint8 one
// (GemmUint8), whose output is the next product's A, requantizes as ONNX
// Runtime's QLinearConv and FBGEMM do, with one float multiplier
// scaleA·scaleB[j]/scaleOut per column and bias[j]/scaleOut, rounding half
// to even and saturating to [0, 255] (AVX2: VCVTPS2DQ, then the
// saturating packs).
//
// # The 16-bit saturation guard
//
// The AVX2 kernel multiplies with VPMADDUBSW, which adds two u8×s8
// products into a signed 16-bit lane with saturation: 255·(−128)·2 =
// −65280 does not fit in [−32768, 32767], so full-range weights would
// silently lose sums. Plumb limits the weights to 7 bits, [−64, 63]:
// 255·64·2 = 32640 fits, every pair sum is exact, and VPMADDWD with ones
// then widens the pairs to exact 32-bit sums. This is ONNX Runtime's
// reduce_range for weights on AVX2 CPUs without VNNI (PyTorch's FBGEMM
// configuration instead reduces the activations to 7 bits). The exact
// alternative, widening both operands to 16 bits (VPMOVZXBW, VPMOVSXBW)
// for VPMADDWD, runs at about half the multiply rate, no faster than
// float32 FMAs. PackB checks the range, once per
// weight matrix, and rejects a weight outside it, so every path, the
// pure-Go one included, gives the same exact sums. The accuracy cost is
// one bit of weight resolution: a symmetric per-channel quantizer has a
// step of max|w|/63 instead of max|w|/127, so the weight rounding error
// (at most half a step) doubles, to 0.8% of the channel's largest
// weight. QuantizeWeights quantizes float32 weights into that range, and
// LinearDynamic runs a dynamically quantized linear layer on it.
//
// A VNNI path (VPDPBUSD, which sums four u8×s8 products straight into
// 32 bits without the 16-bit step) is not written: no CPU at hand reports
// AVX-VNNI or AVX512-VNNI, and untested assembly is not shipped. It would
// take the same packed layout (four K steps per 32-bit lane).
package qgemm
