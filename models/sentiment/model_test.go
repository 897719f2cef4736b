package sentiment

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// ragged builds a ragged batch of ids.
func ragged(seqs ...[]int64) *tensor.Ragged {
	f := data.SeqField("words", seqs)
	return f.Ragged
}

func TestShapesAndParams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params int
	}{{"cnn", 1 + 2*2 + 2}, {"lstm", 1 + Stacked*(2+2) + 2}} {
		m, err := New(tc.name, 30, tensor.NewRNG(1))
		require.NoError(t, err)
		require.Len(t, m.Params(), tc.params, tc.name)
		tape := graph.NewTape()
		// lengths 5, 0 (an empty review), 1 and 9
		logits, err := m.Logits(tape, ragged([]int64{1, 2, 3, 4, 5}, nil, []int64{7}, []int64{1, 1, 2, 3, 5, 8, 13, 21, 29})).Tensor()
		require.NoError(t, err, tc.name)
		require.Equal(t, tensor.Shape{4, Classes}, logits.Shape(), tc.name)
		require.ErrorContains(t, m.Logits(tape, nil).Err(), "no words", tc.name)
		require.ErrorContains(t, m.Logits(tape, ragged([]int64{30})).Err(), "30", tc.name)
	}
	_, err := New("rnn", 30, tensor.NewRNG(1))
	require.ErrorContains(t, err, `unknown model "rnn"`)
	m, err := NewStackedLSTM(30, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Equal(t, []bool{false, true, false}, []bool{m.LSTMs[0].Reverse, m.LSTMs[1].Reverse, m.LSTMs[2].Reverse})
	require.Equal(t, tensor.Shape{FCSize + Hidden, FCSize}, m.FCs[2].Params()[0].Value.Shape())
}

// toyReviews are reviews of random filler words (ids 2..19) in which word 0
// ("good") or word 1 ("bad") appears once, at a random place; the label
// says which, in Paddle's convention (positive 0).
func toyReviews(n int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	seqs := make([][]int64, n)
	labels := make([]int64, n)
	for i := range seqs {
		s := make([]int64, 3+rng.IntN(10))
		for k := range s {
			s[k] = 2 + rng.Int64N(18)
		}
		labels[i] = int64(i % 2)
		s[rng.IntN(len(s))] = labels[i]
		seqs[i] = s
	}
	ds, err := data.NewDataset(data.SeqField("words", seqs), data.DenseField("label", tensor.MustFromSlice(labels)))
	if err != nil {
		panic(err)
	}
	return ds
}

// Both nets learn the toy task with the book's optimizer (at a higher
// rate, for a short test) through the trainer and the evaluator.
func TestModelsLearnToyReviews(t *testing.T) {
	trainSet, testSet := toyReviews(256, 1), toyReviews(128, 2)
	for _, tc := range []struct {
		name   string
		lr     float64
		epochs int
	}{{"cnn", 0.05, 4}, {"lstm", 0.05, 4}} {
		m, err := New(tc.name, 20, tensor.NewRNG(3))
		require.NoError(t, err)
		opt, err := NewOptimizer(m, tc.lr)
		require.NoError(t, err)
		loader, err := data.NewLoader(trainSet, 16, data.Shuffle(1))
		require.NoError(t, err)
		res, err := train.Run(train.Config[*data.Batch]{Params: m.Params(), Optimizer: opt, Train: loader, Loss: Loss(m),
			Epochs: tc.epochs, Evaluate: Evaluator(m, testSet, 50)})
		require.NoError(t, err, tc.name)
		last := res.Epochs[len(res.Epochs)-1]
		require.Greater(t, last.Metrics["accuracy"], 0.9, tc.name)
		require.Less(t, last.TrainLoss, res.Epochs[0].TrainLoss, tc.name)
	}
}

func TestEvaluateEmpty(t *testing.T) {
	m, err := NewCNN(5, tensor.NewRNG(1))
	require.NoError(t, err)
	_, _, err = Evaluate(m, nil, 10, nil)
	require.ErrorContains(t, err, "empty")
}

// A net not built by its constructor, or no model at all, reports that
// instead of panicking on missing layers.
func TestUnbuiltModels(t *testing.T) {
	tape := graph.NewTape()
	for _, tc := range []struct {
		m    Model
		want string
	}{
		{(*CNN)(nil), "sentiment: CNN.Logits: a nil net or one not built by NewCNN"},
		{&CNN{}, "sentiment: CNN.Logits: a nil net or one not built by NewCNN"},
		{(*StackedLSTM)(nil), "sentiment: StackedLSTM.Logits: a nil net or one not built by NewStackedLSTM"},
		{&StackedLSTM{FCs: make([]*layers.Linear, 2)}, "sentiment: StackedLSTM.Logits: a nil net or one not built by NewStackedLSTM"},
	} {
		require.Nil(t, tc.m.Params())
		require.ErrorContains(t, tc.m.Logits(tape, nil).Err(), tc.want)
		_, err := NewOptimizer(tc.m, 0.1)
		require.ErrorContains(t, err, "sentiment: NewOptimizer: a model without parameters")
	}
	_, err := NewOptimizer(nil, 0.1)
	require.ErrorContains(t, err, "sentiment: NewOptimizer: nil model")
}
