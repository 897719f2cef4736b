package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func vec(v ...float64) *tensor.Tensor { return tensor.MustFromSlice(v) }

func ones(n int) *tensor.Tensor {
	t, _ := tensor.Ones(tensor.Float64, n)
	return t
}

// y = x*x + x uses x three times; its gradient must sum all three uses.
func TestGradientAccumulatesOverUses(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vec(1, -2, 3))
	y := Add(Mul(x, x), x)
	require.NoError(t, tape.BackwardWith(y, ones(3)))
	require.Equal(t, []float64{3, -3, 7}, x.Grad().Float64s())
}

func TestParamGradAddsAcrossBackwardsAndZeroes(t *testing.T) {
	p := NewParam("w", vec(2, 3))
	for range 2 {
		tape := NewTape()
		w := tape.Param(p)
		require.Same(t, w, tape.Param(p), "one leaf per param per tape")
		require.NoError(t, tape.BackwardWith(Mul(w, w), ones(2)))
	}
	require.Equal(t, []float64{8, 12}, p.Grad.Float64s())
	p.ZeroGrad()
	require.Equal(t, []float64{0, 0}, p.Grad.Float64s())
}

func TestBackwardTwiceOnOneTapeRecomputes(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vec(1, 2))
	y := Mul(x, x)
	require.NoError(t, tape.BackwardWith(y, ones(2)))
	require.NoError(t, tape.BackwardWith(y, ones(2)))
	require.Equal(t, []float64{2, 4}, x.Grad().Float64s(), "value gradients are recomputed, not doubled")
}

func TestNonTrainableParamGetsNoGrad(t *testing.T) {
	s := NewState("running_mean", vec(1, 1))
	p := NewParam("w", vec(2, 2))
	tape := NewTape()
	require.NoError(t, tape.BackwardWith(Mul(tape.Param(s), tape.Param(p)), ones(2)))
	require.Nil(t, s.Grad)
	require.Equal(t, []float64{1, 1}, p.Grad.Float64s())
}

func TestEvalTapeRecordsNothing(t *testing.T) {
	tape := NewEvalTape()
	require.False(t, tape.Training())
	p := NewParam("w", vec(1, 2))
	y := Mul(tape.Param(p), tape.Const(vec(3, 4)))
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{3, 8}, got.Float64s())
	require.False(t, y.RequiresGrad())
	require.ErrorContains(t, tape.BackwardWith(y, ones(2)), "depends on no parameter")
}

func TestRecordingOffInsideTrainingTape(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vec(1, 2))
	tape.SetRecording(false)
	y := Mul(x, x)
	tape.SetRecording(true)
	require.False(t, y.RequiresGrad())
	z := Mul(x, y)
	require.NoError(t, tape.BackwardWith(z, ones(2)))
	require.Equal(t, []float64{1, 4}, x.Grad().Float64s(), "y is treated as a constant")
}

func TestDetachStopsGradient(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vec(3))
	y := Mul(x, Mul(x, x).Detach()) // d/dx = x²
	require.NoError(t, tape.BackwardWith(y, ones(1)))
	require.Equal(t, []float64{9}, x.Grad().Float64s())
}

func TestErrorsAreStickyAndNamed(t *testing.T) {
	tape := NewTape()
	a := tape.Var(tensor.Zeros(tensor.Float64, 2, 3))
	b := tape.Var(tensor.Zeros(tensor.Float64, 4))
	bad := Relu(Mul(Add(a, b), a))
	_, err := bad.Tensor()
	require.ErrorContains(t, err, "add: inputs float64[2 3], float64[4]")
	require.ErrorIs(t, tape.BackwardWith(bad, ones(1)), err)
	require.Equal(t, err, tape.Err(), "the tape keeps the first error")
	require.Nil(t, bad.Shape())

	_, err = Relu(nil).Tensor()
	require.ErrorContains(t, err, "relu")
	_, err = MatMul(nil, nil, false, false).Tensor()
	require.ErrorContains(t, err, "matmul")
	_, err = Clip(a, 1, 0).Tensor()
	require.ErrorContains(t, err, "clip")
}

func TestValuesFromAnotherTapeFail(t *testing.T) {
	t1, t2 := NewTape(), NewTape()
	_, err := Add(t1.Var(vec(1)), t2.Var(vec(1))).Tensor()
	require.ErrorContains(t, err, "another tape")
}

func TestBackwardNeedsScalarOrMatchingGradient(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vec(1, 2))
	require.ErrorContains(t, tape.Backward(x), "non-scalar")
	require.ErrorContains(t, tape.BackwardWith(x, ones(3)), "upstream gradient")
	require.ErrorContains(t, tape.Backward(nil), "nil")
	_, err := tape.Var(tensor.MustFromSlice([]int64{1})).Tensor()
	require.ErrorContains(t, err, "only float tensors")
}

// The same parameter serves batches of different sizes on successive tapes.
func TestShapesMayChangeBetweenBatches(t *testing.T) {
	w := NewParam("w", tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	for _, n := range []int{1, 4, 2} {
		tape := NewTape()
		x, _ := tensor.Ones(tensor.Float64, n, 3)
		y := MatMul(tape.Const(x), tape.Param(w), false, false)
		g, _ := tensor.Ones(tensor.Float64, n, 2)
		require.NoError(t, tape.BackwardWith(y, g))
	}
	// Each of the 7 rows adds 1 to every dW entry.
	require.Equal(t, []float64{7, 7, 7, 7, 7, 7}, w.Grad.Float64s())
}

// A small network built on the tape agrees with central differences.
func TestCompositeGradientMatchesNumeric(t *testing.T) {
	rng := tensor.NewRNG(3)
	x, _ := tensor.RandNormal(rng, tensor.Float64, 0, 1, 4, 3)
	w, _ := tensor.RandNormal(rng, tensor.Float64, 0, 1, 3, 5)
	b, _ := tensor.RandNormal(rng, tensor.Float64, 0, 1, 5)
	checkNetGradients(t, []*tensor.Tensor{x, w, b}, func(vs []*Value) *Value {
		h := Tanh(Linear(vs[0], vs[1], vs[2]))
		return Mul(Sigmoid(h), Square(h))
	})
}
