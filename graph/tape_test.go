package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func vector(v ...float64) *tensor.Tensor { return tensor.MustFromSlice(v) }

func ones(n int) *tensor.Tensor {
	t, _ := tensor.Ones(tensor.Float64, n)
	return t
}

// y = x*x + x uses x three times; its gradient must sum all three uses.
func TestGradientAccumulatesOverUses(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vector(1, -2, 3))
	y := Add(Mul(x, x), x)
	require.NoError(t, tape.BackwardWith(y, ones(3)))
	require.Equal(t, []float64{3, -3, 7}, x.Grad().Float64s())
}

func TestParamGradAddsAcrossBackwardsAndZeroes(t *testing.T) {
	p := NewParam("w", vector(2, 3))
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
	tape.SetRetainGraph(true)
	x := tape.Var(vector(1, 2))
	y := Mul(x, x)
	require.NoError(t, tape.BackwardWith(y, ones(2)))
	require.NoError(t, tape.BackwardWith(y, ones(2)))
	require.Equal(t, []float64{2, 4}, x.Grad().Float64s(), "value gradients are recomputed, not doubled")
}

// By default Backward frees the graph as it goes: leaves keep their
// gradients and every value its tensor, an op's output loses its
// gradient, and a second Backward of the step is an error that says how
// to keep the graph. After Release the tape trains again.
func TestBackwardFreesTheGraphUnlessRetained(t *testing.T) {
	for _, retain := range []bool{false, true} {
		tape := NewTape()
		tape.SetRetainGraph(retain)
		for step := range 2 {
			x := tape.Var(vector(1, 2))
			h := Mul(x, x)
			y := Sum(Mul(h, x))
			require.NoError(t, tape.Backward(y), "retain %v step %d", retain, step)
			require.Equal(t, []float64{3, 12}, x.Grad().Float64s())
			got, err := h.Tensor()
			require.NoError(t, err)
			require.Equal(t, []float64{1, 4}, got.Float64s(), "a value's tensor outlives Backward")
			err = tape.Backward(y)
			if retain {
				require.NoError(t, err)
				require.Equal(t, []float64{1, 2}, h.Grad().Float64s())
			} else {
				require.ErrorContains(t, err, "SetRetainGraph")
				require.Nil(t, h.Grad(), "an op output's gradient is freed")
			}
			tape.Release()
		}
	}
}

func TestNonTrainableParamGetsNoGrad(t *testing.T) {
	s := NewState("running_mean", vector(1, 1))
	p := NewParam("w", vector(2, 2))
	tape := NewTape()
	require.NoError(t, tape.BackwardWith(Mul(tape.Param(s), tape.Param(p)), ones(2)))
	require.Nil(t, s.Grad)
	require.Equal(t, []float64{1, 1}, p.Grad.Float64s())
}

func TestEvalTapeRecordsNothing(t *testing.T) {
	tape := NewEvalTape()
	require.False(t, tape.Training())
	p := NewParam("w", vector(1, 2))
	y := Mul(tape.Param(p), tape.Const(vector(3, 4)))
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{3, 8}, got.Float64s())
	require.False(t, y.RequiresGrad())
	require.ErrorContains(t, tape.BackwardWith(y, ones(2)), "depends on no parameter")
}

func TestRecordingOffInsideTrainingTape(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vector(1, 2))
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
	x := tape.Var(vector(3))
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
	_, err := Add(t1.Var(vector(1)), t2.Var(vector(1))).Tensor()
	require.ErrorContains(t, err, "another tape")
}

func TestBackwardNeedsScalarOrMatchingGradient(t *testing.T) {
	tape := NewTape()
	x := tape.Var(vector(1, 2))
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

// mlpStep is one step of a small two-layer network on x through w1 and w2
// (Param leaves on tape): tanh(x·w1)·w2, summed. It returns the hidden
// layer, its reshaped view and the loss.
func mlpStep(tape *Tape, x *tensor.Tensor, w1, w2 *Param) (h, flat, loss *Value) {
	h = Tanh(MatMul(tape.Const(x), tape.Param(w1), false, false))
	flat = Reshape(h, -1)
	loss = Sum(MatMul(h, tape.Param(w2), false, false))
	return h, flat, loss
}

func mlpParams(seed uint64) (x *tensor.Tensor, w1, w2 *Param) {
	rng := tensor.NewRNG(seed)
	x, _ = tensor.RandNormal(rng, tensor.Float64, 0, 1, 17, 3)
	a, _ := tensor.RandNormal(rng, tensor.Float64, 0, 1, 3, 5)
	b, _ := tensor.RandNormal(rng, tensor.Float64, 0, 1, 5, 1)
	return x, NewParam("w1", a), NewParam("w2", b)
}

// After Release every value of the step is dead: its methods and the ops
// report Release instead of showing storage the next step may reuse.
func TestReleaseEndsTheStep(t *testing.T) {
	x, w1, w2 := mlpParams(1)
	tape := NewTape()
	h, flat, loss := mlpStep(tape, x, w1, w2)
	require.NoError(t, tape.Backward(loss))
	leaf := tape.Param(w1)
	tape.Release()

	for name, v := range map[string]*Value{"op output": h, "view": flat, "loss": loss, "param leaf": leaf} {
		_, err := v.Tensor()
		require.ErrorContains(t, err, "Release", name)
		require.ErrorContains(t, v.Err(), "Release", name)
		_, err = v.Item()
		require.ErrorContains(t, err, "Release", name)
		require.Nil(t, v.Shape(), name)
		require.Zero(t, v.DType(), name)
		require.Nil(t, v.Grad(), name)
		require.ErrorContains(t, v.Detach().Err(), "Release", name)
		_, err = Tanh(v).Tensor()
		require.ErrorContains(t, err, "tanh: input 0: graph: value of a step that Tape.Release ended", name)
	}
	require.ErrorContains(t, tape.Backward(loss), "Release")
	require.ErrorContains(t, tape.BackwardWith(h, tensor.Zeros(tensor.Float64, 17, 5)), "Release")
}

// A released tape keeps its mode and serves the next step like a new one:
// fresh parameter leaves, no error from the last step.
func TestReleasedTapeServesTheNextStep(t *testing.T) {
	x, w1, w2 := mlpParams(2)
	tape := NewTape()
	tape.SetRecording(true)
	_, err := Add(tape.Var(vector(1, 2)), tape.Var(vector(1, 2, 3))).Tensor()
	require.Error(t, err)
	leaf := tape.Param(w1)
	tape.Release()
	require.NoError(t, tape.Err(), "the error was the released step's")
	require.True(t, tape.Training())
	require.True(t, tape.Recording())
	require.NotSame(t, leaf, tape.Param(w1))

	_, _, loss := mlpStep(tape, x, w1, w2)
	require.NoError(t, tape.Backward(loss))
	want := w1.Grad.Clone()
	w1.ZeroGrad()
	w2.ZeroGrad()
	fresh := NewTape()
	_, _, loss = mlpStep(fresh, x, w1, w2)
	require.NoError(t, fresh.Backward(loss))
	require.Equal(t, want.Float64s(), w1.Grad.Float64s())

	var unused Tape
	unused.Release() // a zero tape releases nothing
	NewEvalTape().Release()
}

// Whatever a caller was handed before Release stays its own: later steps
// on the same tape, of the same shapes, never write into it.
func TestReleaseKeepsWhatCallersHold(t *testing.T) {
	tests := []struct {
		name string
		hold func(t *testing.T, tape *Tape, h, flat, loss *Value) *tensor.Tensor
	}{
		{"Tensor of an op output", func(t *testing.T, _ *Tape, h, _, _ *Value) *tensor.Tensor {
			x, err := h.Tensor()
			require.NoError(t, err)
			return x
		}},
		{"Tensor of a view of an op output", func(t *testing.T, _ *Tape, _, flat, _ *Value) *tensor.Tensor {
			x, err := flat.Tensor()
			require.NoError(t, err)
			return x
		}},
		{"Grad of an op output", func(t *testing.T, _ *Tape, h, _, _ *Value) *tensor.Tensor {
			require.NotNil(t, h.Grad())
			return h.Grad()
		}},
		{"Detach of an op output", func(t *testing.T, _ *Tape, h, _, _ *Value) *tensor.Tensor {
			x, err := h.Detach().Tensor()
			require.NoError(t, err)
			return x
		}},
		{"Detach then a view", func(t *testing.T, _ *Tape, h, _, _ *Value) *tensor.Tensor {
			d := h.Detach()
			x, err := Reshape(d, 5, 17).Tensor()
			require.NoError(t, err)
			return x
		}},
		{"a Var's gradient", func(t *testing.T, tape *Tape, _, _, _ *Value) *tensor.Tensor {
			v := tape.Var(vector(1, 2, 3))
			require.NoError(t, tape.BackwardWith(Square(v), vector(1, 1, 1)))
			return v.Grad()
		}},
		{"BackwardWith's upstream gradient", func(t *testing.T, tape *Tape, h, _, _ *Value) *tensor.Tensor {
			g := tensor.Zeros(tensor.Float64, 17, 5)
			g.Fill(0.5)
			require.NoError(t, tape.BackwardWith(h, g))
			return g
		}},
		{"a constant", func(t *testing.T, tape *Tape, _, _, _ *Value) *tensor.Tensor {
			c := tensor.Zeros(tensor.Float64, 17, 5)
			c.Fill(3)
			_, err := Add(tape.Const(c), tape.Const(c)).Tensor()
			require.NoError(t, err)
			return c
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, w1, w2 := mlpParams(3)
			tape := NewTape()
			tape.SetRetainGraph(true) // for an op output's gradient and a second backward
			h, flat, loss := mlpStep(tape, x, w1, w2)
			require.NoError(t, tape.Backward(loss))
			held := tc.hold(t, tape, h, flat, loss)
			want := held.Clone()
			tape.Release()
			tape.SetRetainGraph(false) // later steps free gradients as Backward goes
			for step := range 4 {
				x.Fill(float64(step + 7))
				_, _, loss := mlpStep(tape, x, w1, w2)
				require.NoError(t, tape.Backward(loss))
				tape.Release()
				require.Equal(t, want.Float64s(), held.Float64s(), "after step %d", step)
			}
			for range 64 { // every free tensor of held's size class, taken and written
				tensor.Zeros(held.DType(), held.Shape()...).Fill(9)
			}
			require.Equal(t, want.Float64s(), held.Float64s())
		})
	}
}

// Parameters and their gradients are never recycled: a step's update
// reads them after Release.
func TestReleaseKeepsParameters(t *testing.T) {
	x, w1, w2 := mlpParams(4)
	tape := NewTape()
	_, _, loss := mlpStep(tape, x, w1, w2)
	require.NoError(t, tape.Backward(loss))
	value, grad := w1.Value.Clone(), w1.Grad.Clone()
	tape.Release()
	for range 3 {
		_, _, loss := mlpStep(tape, x, w1, w2)
		_, err := loss.Tensor()
		require.NoError(t, err)
		tape.Release()
	}
	require.Equal(t, value.Float64s(), w1.Value.Float64s())
	require.Equal(t, grad.Float64s(), w1.Grad.Float64s())
}

// Graph functions that look at their input before the op runs report a
// released input as such.
func TestReleasedInputsOfGraphFunctions(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.Zeros(tensor.Float64, 2, 3))
	tape.Release()
	for name, v := range map[string]*Value{
		"flatten": Flatten(x),
		"stack":   Stack(0, x, x),
		"seq":     NewSeq(x, []int{0, 2}).Values,
	} {
		require.ErrorContains(t, v.Err(), "Release", name)
	}
}

// A NaN or infinite loss is an error from Backward, and no gradient reaches
// the parameters.
func TestBackwardRejectsNonFiniteLoss(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		p := NewParam("w", tensor.MustFromSlice([]float64{1, 2}, 2))
		tape := NewTape()
		x := tape.Const(tensor.MustFromSlice([]float64{bad, 1}, 2))
		loss := Sum(Mul(tape.Param(p), x))
		err := tape.Backward(loss)
		require.ErrorContains(t, err, "graph: Backward: the loss is ")
		require.Nil(t, p.Grad, "no gradient for a non-finite loss")
	}
}
