package word2vec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

func TestShapesAndErrors(t *testing.T) {
	m, err := New(50, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Len(t, m.Params(), 5)
	require.Equal(t, tensor.Shape{50, Embed}, m.Emb.Table.Value.Shape())
	require.Equal(t, tensor.Shape{(N - 1) * Embed, Hidden}, m.Hidden.Params()[0].Value.Shape())
	tape := graph.NewTape()
	ctx := tensor.MustFromSlice([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 3, 4)
	logits, err := m.Logits(tape, ctx).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 50}, logits.Shape())

	for _, bad := range []*tensor.Tensor{nil, tensor.MustFromSlice([]int64{1, 2, 3}, 1, 3)} {
		require.ErrorContains(t, m.Logits(tape, bad).Err(), "word2vec: context")
	}
	require.ErrorContains(t, m.Loss(tape, ctx, tensor.MustFromSlice([]int64{1, 2, 50})).Err(), "50")
	_, err = New(1, tensor.NewRNG(1))
	require.ErrorContains(t, err, "at least 2")
}

// The four lookups concatenated in order are what the hidden layer sees:
// swapping two context words changes the logits.
func TestContextOrderMatters(t *testing.T) {
	m, err := New(20, tensor.NewRNG(2))
	require.NoError(t, err)
	tape := graph.NewEvalTape()
	a, err := m.Logits(tape, tensor.MustFromSlice([]int64{1, 2, 3, 4}, 1, 4)).Tensor()
	require.NoError(t, err)
	b, err := m.Logits(tape, tensor.MustFromSlice([]int64{2, 1, 3, 4}, 1, 4)).Tensor()
	require.NoError(t, err)
	require.NotEqual(t, a.Float32s(), b.Float32s())
}

// tinyCorpus is sentences over 12 words where each word determines the
// next, so an N-gram model can learn them.
func tinyCorpus(n int) [][]string {
	words := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	var out [][]string
	for s := range n {
		var sent []string
		for k := range 8 {
			sent = append(sent, words[(s*5+k*7)%len(words)])
		}
		out = append(out, sent)
	}
	return out
}

// A few passes of the book's optimizer over a tiny generated corpus lower
// the cost, through the trainer and the evaluator the command uses.
func TestTrainingLowersCost(t *testing.T) {
	tr := tinyCorpus(200)
	d, err := FromSentences(tr, tr[:20], tr[20:40])
	require.NoError(t, err)
	require.Equal(t, 15, d.Vocab.Len()) // 12 words, <s>, <e>, <unk>
	require.Equal(t, 200*(8+2-N+1), d.Train.Len())

	m, err := New(d.Vocab.Len(), tensor.NewRNG(3))
	require.NoError(t, err)
	before, err := m.Cost(d.Test, 64, nil)
	require.NoError(t, err)
	opt, err := NewOptimizer(m, 0.05)
	require.NoError(t, err)
	loader, err := data.NewLoader(d.Train, 32, data.Shuffle(1))
	require.NoError(t, err)
	res, err := train.Run(train.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: loader, Loss: m.BatchLoss, Epochs: 3,
		Evaluate: m.Evaluator(64, Split{"test", d.Test}), Monitor: "test_cost",
	})
	require.NoError(t, err)
	after := res.Epochs[2].Metrics["test_cost"]
	require.Less(t, after, before/2, "cost %v -> %v", before, after)
	require.Less(t, res.Epochs[2].TrainLoss, res.Epochs[0].TrainLoss)
}

func TestSimilar(t *testing.T) {
	m, err := New(4, tensor.NewRNG(1))
	require.NoError(t, err)
	m.Emb.Table.Value = tensor.MustFromSlice([]float32{
		1, 0, // 0
		0.5, 0, // 1
		2, 0, // 2
		-1, 0, // 3
	}, 4, 2)
	got, err := m.Similar(0, 2)
	require.NoError(t, err)
	require.Equal(t, []Neighbour{{2, 2}, {1, 0.5}}, got)
	got, err = m.Similar(3, 10)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, 1, got[0].ID)
	_, err = m.Similar(4, 1)
	require.ErrorContains(t, err, "outside the dictionary")
	_, err = m.Similar(0, 0)
	require.ErrorContains(t, err, "k=0")
}

// A model not built by New reports that, naming the method, instead of
// panicking on its missing table.
func TestUnbuiltModel(t *testing.T) {
	tape := graph.NewTape()
	for _, m := range []*Model{nil, {}} {
		require.Nil(t, m.Params())
		require.ErrorContains(t, m.Logits(tape, nil).Err(), "word2vec: Model.Logits: a nil model or one not built by New")
		_, err := m.Similar(0, 1)
		require.ErrorContains(t, err, "word2vec: similar: a nil model")
		_, err = NewOptimizer(m, 0.1)
		require.ErrorContains(t, err, "word2vec: NewOptimizer: a nil model")
	}
}
