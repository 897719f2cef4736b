package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func randn(seed uint64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandNormal(tensor.NewRNG(seed), tensor.Float64, 0, 1, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// The model-code form: logits on the tape, integer labels as a tensor; the
// gradient of the batch mean is (softmax - onehot)/N.
func TestSoftmaxCrossEntropyBackward(t *testing.T) {
	tape := NewTape()
	z := tape.Var(tensor.MustFromSlice([]float64{1, 2, 0, -1, 0.5, 3}, 2, 3))
	loss := SoftmaxCrossEntropy(z, tensor.MustFromSlice([]int32{1, 0}, 2))
	require.NoError(t, tape.Backward(loss))
	want := 0.0
	for i, l := range []int{1, 0} {
		row := z.t.Float64s()[i*3 : (i+1)*3]
		s := math.Exp(row[0]) + math.Exp(row[1]) + math.Exp(row[2])
		want += (math.Log(s) - row[l]) / 2
		for j := range 3 {
			g := math.Exp(row[j]) / s
			if j == l {
				g--
			}
			require.InDelta(t, g/2, z.Grad().At(i*3+j), 1e-15)
		}
	}
	got, err := loss.Item()
	require.NoError(t, err)
	require.InDelta(t, want, got, 1e-15)
}

func TestLossWrappersFailWithoutPanic(t *testing.T) {
	labels := tensor.MustFromSlice([]int64{0, 4}, 2)
	tape := NewTape()
	z := tape.Var(tensor.Zeros(tensor.Float32, 2, 3))

	_, err := SoftmaxCrossEntropy(z, labels).Tensor()
	require.ErrorContains(t, err, "softmax_cross_entropy: inputs float32[2 3], int64[2]: label 4 at row 1 out of range [0, 3)")
	require.Equal(t, err, tape.Err())
	_, err = SoftmaxCrossEntropy(z, nil).Tensor()
	require.ErrorContains(t, err, "softmax_cross_entropy: nil tensor input")
	_, err = SoftmaxCrossEntropy(nil, labels).Tensor()
	require.ErrorContains(t, err, "softmax_cross_entropy")
	bad := Add(z, tape.Var(tensor.Zeros(tensor.Float32, 4)))
	require.ErrorIs(t, SoftmaxCrossEntropy(bad, labels).Err(), bad.Err(), "a failed input passes its error on")
	require.ErrorContains(t, MSE(z, nil).Err(), "mse")
	require.ErrorContains(t, SigmoidCrossEntropy(nil, z).Err(), "sigmoid_cross_entropy")
	require.ErrorContains(t, BatchNorm(nil, z, z, nil, nil, ops.BatchNormAttrs{Momentum: 0.99, Epsilon: 1e-3}).Err(), "batch_norm")
	require.ErrorContains(t, Dropout(nil, 0.5, tensor.NewRNG(1)).Err(), "dropout")
}

func TestDropoutFollowsTapeMode(t *testing.T) {
	x := randn(1, 8, 8)
	eval := NewEvalTape()
	xv := eval.Const(x)
	require.Same(t, xv, Dropout(xv, 0.5, tensor.NewRNG(2)), "inference: dropout is a no-op")

	tape := NewTape()
	xv = tape.Var(x)
	y := Dropout(xv, 0.5, tensor.NewRNG(2))
	require.NoError(t, tape.Backward(Sum(y)))
	yt, err := y.Tensor()
	require.NoError(t, err)
	dropped := 0
	for i := range 64 {
		if yt.At(i) == 0 {
			dropped++
			require.Zero(t, xv.Grad().At(i))
		} else {
			require.InDelta(t, 2*x.At(i), yt.At(i), 1e-15)
			require.Equal(t, 2.0, xv.Grad().At(i))
		}
	}
	require.Greater(t, dropped, 16)
	require.Less(t, dropped, 48)
	require.ErrorContains(t, Dropout(xv, 1, tensor.NewRNG(2)).Err(), "dropout: inputs float64[8 8]: rate 1 outside [0, 1)")
}

func TestBatchNormFollowsTapeMode(t *testing.T) {
	gamma := NewParam("gamma", tensor.MustFromSlice([]float64{1, 2}))
	beta := NewParam("beta", tensor.MustFromSlice([]float64{0, 1}))
	mean := NewState("moving_mean", tensor.MustFromSlice([]float64{0, 0}))
	variance := NewState("moving_variance", tensor.MustFromSlice([]float64{1, 1}))
	x := randn(3, 4, 2, 3)
	bn := func(tape *Tape) *Value {
		return BatchNorm(tape.Const(x), tape.Param(gamma), tape.Param(beta), mean.Value, variance.Value,
			ops.BatchNormAttrs{Momentum: ops.DefaultBatchNormMomentum, Epsilon: ops.DefaultBatchNormEpsilon})
	}

	tape := NewTape()
	require.NoError(t, tape.Backward(Sum(Square(bn(tape)))))
	require.NotNil(t, gamma.Grad)
	require.NotNil(t, beta.Grad)
	require.NotEqual(t, []float64{0, 0}, mean.Value.Float64s(), "training updates the moving mean")
	updated := mean.Value.Clone()

	y, err := bn(NewEvalTape()).Tensor()
	require.NoError(t, err)
	require.Equal(t, updated.Float64s(), mean.Value.Float64s(), "inference leaves it alone")
	want, err := ops.BatchNorm(x, gamma.Value, beta.Value, mean.Value, variance.Value,
		ops.BatchNormAttrs{Momentum: 0.99, Epsilon: 1e-3})
	require.NoError(t, err)
	require.Equal(t, want.Float64s(), y.Float64s())
}

// A network through every wrapper agrees with central differences.
func TestNNWrappersGradientMatchesNumeric(t *testing.T) {
	in := []*tensor.Tensor{randn(4, 3, 4), randn(5, 4), randn(6, 4), randn(7, 3, 4)}
	checkNetGradients(t, in, func(vs []*Value) *Value {
		h := LayerNorm(vs[0], vs[1], vs[2], 1, ops.DefaultLayerNormEpsilon)
		h = BatchNorm(h, vs[1], vs[2], tensor.Zeros(tensor.Float64, 4), ones(4), ops.BatchNormAttrs{Momentum: 0.9, Epsilon: 1e-3})
		h = Dropout(h, 0.3, tensor.NewRNG(7))
		loss := Add(MSE(Softmax(h, -1), vs[3]), SoftmaxCrossEntropySoft(h, vs[3]))
		loss = Add(loss, SigmoidCrossEntropy(LogSoftmax(h, 0), vs[3]))
		return Add(loss, SoftmaxCrossEntropy(h, tensor.MustFromSlice([]int64{3, 0, 1}, 3)))
	})
}

func TestDropoutRejectsBadRateOnEitherTape(t *testing.T) {
	for _, tape := range []*Tape{NewTape(), NewEvalTape()} {
		_, err := Dropout(tape.Const(ones(3)), 1.5, tensor.NewRNG(1)).Tensor()
		require.ErrorContains(t, err, "dropout")
		require.ErrorContains(t, err, "rate 1.5 outside [0, 1)")
	}
}

func TestGroupAndInstanceNormGradientMatchesNumeric(t *testing.T) {
	in := []*tensor.Tensor{randn(11, 2, 4, 3), randn(12, 4), randn(13, 4), randn(14, 4), randn(15, 4)}
	checkNetGradients(t, in, func(vs []*Value) *Value {
		h := GroupNorm(vs[0], vs[1], vs[2], 2, ops.DefaultNormEpsilon)
		h = InstanceNorm(Tanh(h), vs[3], vs[4], 1e-3)
		return Sum(Mul(h, h))
	})
}

func TestGroupNormErrorNamesOp(t *testing.T) {
	tape := NewTape()
	x, c := tape.Const(randn(1, 2, 6, 3)), tape.Const(randn(2, 6))
	_, err := GroupNorm(x, c, c, 4, ops.DefaultNormEpsilon).Tensor()
	require.ErrorContains(t, err, "group_norm: inputs float64[2 6 3], float64[6], float64[6]: num_groups 4 must be positive and divide the 6 channels")
	_, err = InstanceNorm(tape.Const(randn(3, 2, 6)), c, c, ops.DefaultNormEpsilon).Tensor()
	require.ErrorContains(t, err, "instance_norm: inputs float64[2 6], float64[6], float64[6]: want x of rank >= 3")
}
