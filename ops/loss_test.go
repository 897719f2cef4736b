package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// checkLossReductions runs the loss op from mk under each reduction on in
// and compares with the per-example losses per, computed plainly by the
// caller, of the given shape: their mean and sum as scalars, and per
// itself under LossNone; it also compares float32 with float64.
func checkLossReductions(t *testing.T, mk func(LossReduction) Op, per []float64, shape []int, in ...*tensor.Tensor) {
	t.Helper()
	sum := 0.0
	for _, v := range per {
		sum += v
	}
	for _, c := range []struct {
		r    LossReduction
		want *tensor.Tensor
	}{
		{LossMean, tensor.Scalar(sum / float64(len(per)))},
		{LossSum, tensor.Scalar(sum)},
		{LossNone, tensor.MustFromSlice(per, shape...)},
	} {
		t.Run(c.r.String(), func(t *testing.T) {
			got, err := mk(c.r).Forward(in)
			require.NoError(t, err)
			requireClose(t, c.want, got, 1e-14, 1e-12)
			checkDTypes(t, func() Op { return mk(c.r) }, in...)
		})
	}
}

func TestLossReductionString(t *testing.T) {
	require.Equal(t, "mean", LossMean.String())
	require.Equal(t, "sum", LossSum.String())
	require.Equal(t, "none", LossNone.String())
	require.Equal(t, "LossReduction(9)", LossReduction(9).String())
}

// An empty batch under LossMean is an error naming the op and the shapes,
// for every loss (a batch that lost its examples must not train
// silently on a loss of 0); LossSum gives 0 and LossNone
// an empty tensor.
func TestLossEmptyBatch(t *testing.T) {
	z := tensor.Zeros(tensor.Float32, 0, 3)
	cases := []struct {
		name string
		mk   func(LossReduction) Op
		in   []*tensor.Tensor
		want string
		none tensor.Shape
	}{
		{"softmax_cross_entropy", SoftmaxCrossEntropyOp, ins(z, tensor.Zeros(tensor.Int64, 0)),
			"softmax_cross_entropy: inputs float32[0 3], int64[0]", tensor.Shape{0}},
		{"softmax_cross_entropy_soft", SoftmaxCrossEntropySoftOp, ins(z, tensor.Zeros(tensor.Float32, 0, 3)),
			"softmax_cross_entropy_soft: inputs float32[0 3], float32[0 3]", tensor.Shape{0}},
		{"sigmoid_cross_entropy", SigmoidCrossEntropyOp, ins(z, tensor.Zeros(tensor.Float32, 0, 3)),
			"sigmoid_cross_entropy: inputs float32[0 3], float32[0 3]", tensor.Shape{0, 3}},
		{"mse", MSEOp, ins(tensor.Zeros(tensor.Float64, 0, 3), tensor.Zeros(tensor.Float64, 0, 3)),
			"mse: inputs float64[0 3], float64[0 3]", tensor.Shape{0, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.mk(LossMean).Forward(c.in)
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "empty batch")
			if ch, ok := c.mk(LossMean).(Checker); ok {
				require.ErrorContains(t, ch.Check(c.in), "empty batch", "the device-free check too")
			}
			got, err := c.mk(LossSum).Forward(c.in)
			require.NoError(t, err)
			require.Equal(t, 0.0, got.At(0))
			got, err = c.mk(LossNone).Forward(c.in)
			require.NoError(t, err)
			require.Equal(t, c.none, got.Shape())
		})
	}
	_, err := LinearSoftmaxCrossEntropy(z, tensor.Zeros(tensor.Float32, 3, 4), tensor.Zeros(tensor.Float32, 4), tensor.Zeros(tensor.Int64, 0))
	require.ErrorContains(t, err, "linear_softmax_cross_entropy: inputs float32[0 3], float32[3 4], float32[4], int64[0]")
	require.ErrorContains(t, err, "empty batch")
	_, err = SoftmaxCrossEntropySoft(tensor.Zeros(tensor.Float32, 2, 0), tensor.Zeros(tensor.Float32, 2, 0), LossSum)
	require.ErrorContains(t, err, "with C >= 1")
}
