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
