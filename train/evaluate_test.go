package train

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Evaluate weighs each batch's means by its size, on an inference tape
// (dropout off), and reports the examples done; MeanLoss is its mean of a
// LossFunc, the same as summing every example's squared error by hand.
func TestEvaluateAndMeanLoss(t *testing.T) {
	src := regression{n: 10, size: 4, seed: 1} // batches of 4, 4 and 2
	s := newSetup(t, nil)
	want, n := 0.0, 0
	for b := range src.Batches(0) {
		out, err := s.net.Forward(graph.NewEvalTape().Const(b.x)).Tensor()
		require.NoError(t, err)
		for k, y := range b.y.Float64s() {
			want += math.Pow(out.Float64s()[k]-y, 2)
			n++
		}
	}
	want /= float64(n)

	var done []int
	got, err := MeanLoss(src, s.loss, func(d, total int) {
		require.Equal(t, 10, total)
		done = append(done, d)
	})
	require.NoError(t, err)
	require.InDelta(t, want, got, 1e-12, "dropout is off and batches are weighed by size")
	require.Equal(t, []int{4, 8, 10}, done)

	sizes := []int{}
	m, err := Evaluate(src, func(tp *graph.Tape, b pair) (Metrics, int, error) {
		require.False(t, tp.Training())
		sizes = append(sizes, b.x.Dim(0))
		return Metrics{"size": float64(b.x.Dim(0)), "one": 1}, b.x.Dim(0), nil
	}, nil)
	require.NoError(t, err)
	require.Equal(t, []int{4, 4, 2}, sizes)
	require.Equal(t, Metrics{"size": (4*4 + 4*4 + 2*2) / 10.0, "one": 1}, m)

	ev := Evaluation(src, func(*graph.Tape, pair) (Metrics, int, error) { return Metrics{"x": 2}, 1, nil })
	m, err = ev(nil)
	require.NoError(t, err)
	require.Equal(t, Metrics{"x": 2}, m)
}

var errBoom = errors.New("boom")

func TestEvaluateErrors(t *testing.T) {
	src := regression{n: 10, size: 4, seed: 1}
	ok := func(*graph.Tape, pair) (Metrics, int, error) { return Metrics{"a": 1}, 1, nil }
	_, err := Evaluate[pair](nil, ok, nil)
	require.ErrorContains(t, err, "train: Evaluate needs a source and a batch evaluation")
	_, err = Evaluate(src, nil, nil)
	require.ErrorContains(t, err, "train: Evaluate needs a source and a batch evaluation")
	_, err = Evaluate(regression{}, ok, nil)
	require.ErrorContains(t, err, "train: Evaluate on an empty source")
	_, err = Evaluate(regression{n: 10, size: 4, seed: 1, fail: 2}, ok, nil)
	require.ErrorContains(t, err, "disk on fire")
	calls := 0
	_, err = Evaluate(src, func(*graph.Tape, pair) (Metrics, int, error) {
		calls++
		if calls == 2 {
			return Metrics{"b": 1}, 1, nil
		}
		return Metrics{"a": 1}, 1, nil
	}, nil)
	require.ErrorContains(t, err, `train: Evaluate: a batch without metric "a" (it has [b])`)
	_, err = Evaluate(src, func(*graph.Tape, pair) (Metrics, int, error) { return nil, 0, nil }, nil)
	require.ErrorContains(t, err, "yielded no examples")
	_, err = MeanLoss[pair](src, nil, nil)
	require.ErrorContains(t, err, "train: MeanLoss: nil loss")
	_, err = MeanLoss(src, func(tp *graph.Tape, _ pair) (*graph.Value, int) { return tp.Fail(errBoom), 1 }, nil)
	require.ErrorIs(t, err, errBoom)
}

func TestClassification(t *testing.T) {
	tape := graph.NewEvalTape()
	logits := tape.Const(tensor.MustFromSlice([]float64{2, 0, 0, 1, 3, 0}, 3, 2))
	labels := tensor.MustFromSlice([]int32{0, 1, 1}, 3)
	m, err := Classification(logits, labels)
	require.NoError(t, err)
	want := (math.Log(1+math.Exp(-2)) + math.Log(1+math.Exp(-1)) + math.Log(1+math.Exp(3))) / 3
	require.InDelta(t, want, m["loss"], 1e-12)
	require.InDelta(t, 2.0/3, m["accuracy"], 1e-15)
	_, err = Classification(logits, tensor.MustFromSlice([]int32{0, 2, 1}, 3))
	require.ErrorContains(t, err, "softmax_cross_entropy")
	_, err = Classification(nil, labels)
	require.Error(t, err)
}
