package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The inputs stay off the kinks, where αx+β is 0 or 1: with ONNX's
// defaults at -2.5 and 2.5, with Keras's (1/6, 1/2) at -3 and 3.
var _ = addGradCases("hard_sigmoid",
	gradCase{name: "onnx_defaults", attrs: Attrs{Alpha: 0.2, Beta: 0.5},
		in: ins(tensor.MustFromSlice([]float64{-3.7, -2.6, -2.4, -1.1, -0.2, 0.3, 1.4, 2.4, 2.6, 4.1, 0.9, -5.5}, 3, 4)), wrt: []int{0}},
	gradCase{name: "keras_2x3x2", attrs: Attrs{Alpha: 1.0 / 6, Beta: 0.5},
		in: ins(tensor.MustFromSlice([]float64{-3.2, -2.8, -1.5, 0.4, 2.8, 3.3, 5.1, -4.4, 1.7, -0.6, 2.2, -2.1}, 2, 3, 2)), wrt: []int{0}},
)

// hard_sigmoid matches max(0, min(1, αx+β)) evaluated plainly, in both
// dtypes, on an odd-sized tensor spanning both saturated ends, and its
// gradient is α inside the linear part and 0 outside.
func TestHardSigmoidMatchesReference(t *testing.T) {
	x := randn(41, 3, 5, 7)
	for i := range x.Size() {
		x.Float64s()[i] *= 4
	}
	gout := randn(42, 3, 5, 7)
	for _, a := range []HardSigmoidAttrs{DefaultHardSigmoidAttrs(), {Alpha: 1.0 / 6, Beta: 0.5}, {Alpha: -0.7, Beta: 0.1}} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			xt, gt, atol := x, gout, 1e-12
			if dt == tensor.Float32 {
				xt, gt, atol = f32(x), f32(gout), 1e-6
			}
			op := HardSigmoidOp(a)
			y, err := op.Forward(ins(xt))
			require.NoError(t, err)
			require.Equal(t, dt, y.DType())
			g, err := op.Backward(ins(xt), y, gt, []bool{true})
			require.NoError(t, err)
			for i := range xt.Size() {
				v := a.Alpha*xt.At(i) + a.Beta
				want, d := v, a.Alpha
				if v <= 0 || v >= 1 {
					want, d = math.Max(0, math.Min(1, v)), 0
				}
				require.InDelta(t, want, y.At(i), atol, "%+v %v y[%d]", a, dt, i)
				require.InDelta(t, gt.At(i)*d, g[0].At(i), atol, "%+v %v dx[%d]", a, dt, i)
			}
		}
	}
}

// At ONNX's defaults hard_sigmoid is 1/2 at 0 with slope 0.2, and its kinks
// at -2.5 and 2.5 take the values 0 and 1 with gradient 0 (relu6's choice
// at its kinks).
func TestHardSigmoidSpecialPoints(t *testing.T) {
	x := tensor.MustFromSlice([]float64{-2.5, 0, 2.5, -10, 10}, 5)
	y, err := HardSigmoid(x, 0.2, 0.5)
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice([]float64{0, 0.5, 1, 0, 1}, 5), y, 1e-15, 0)
	g, err := HardSigmoidOp(DefaultHardSigmoidAttrs()).Backward(ins(x), y, tensor.MustFromSlice([]float64{1, 1, 1, 1, 1}, 5), []bool{true})
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice([]float64{0, 0.2, 0, 0, 0}, 5), g[0], 1e-15, 0)
}

// Build gives back the attributes hard_sigmoid was made with, as its own
// struct, and the op's errors name it.
func TestHardSigmoidBuildAndErrors(t *testing.T) {
	op, err := Build("hard_sigmoid", Attrs{Alpha: 0.3, Beta: 0.4})
	require.NoError(t, err)
	require.Equal(t, "hard_sigmoid", op.Name())
	require.Equal(t, HardSigmoidAttrs{Alpha: 0.3, Beta: 0.4}, op.(Attributed).Attrs())
	_, err = HardSigmoid(tensor.Zeros(tensor.Int64, 2), 0.2, 0.5)
	require.ErrorContains(t, err, "hard_sigmoid: inputs int64[2]")
	_, err = Run(op, tensor.Zeros(tensor.Float32, 2), tensor.Zeros(tensor.Float32, 2))
	require.ErrorContains(t, err, "hard_sigmoid")
}
