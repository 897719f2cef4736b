package bert

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// The masked-LM logits of chosen rows are those rows of the full logits,
// and one training step of the masked LM and of the classifier sends a
// gradient to every parameter (the word embeddings through both the
// lookup and the tied decoder).
func TestHeadsTrainingStep(t *testing.T) {
	cfg := tinyConfig()
	m, err := NewMaskedLM(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	require.Equal(t, "bert.embeddings.word_embeddings.weight", m.Params()[0].Name)
	require.Equal(t, "cls.predictions.bias", m.Params()[len(m.Params())-1].Name)
	require.Len(t, m.Params(), 5+16*cfg.NumHiddenLayers+5) // embeddings, layers, head; no pooler
	b, err := NewBatch([][]int{{2, 7, 8, 9, 3}, {2, 5, 3}}, nil)
	require.NoError(t, err)
	masked, err := MaskTokens(b, MaskConfig{Prob: 0.5, MaskID: 4, VocabSize: cfg.VocabSize, Special: func(id int) bool { return id == 2 || id == 3 }}, rand.New(rand.NewPCG(5, 5)))
	require.NoError(t, err)

	tape := graph.NewEvalTape()
	all, err := m.Logits(tape, masked.Batch, nil).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 5, cfg.VocabSize}, all.Shape())
	some, err := m.Logits(tape, masked.Batch, masked.Rows).Tensor()
	require.NoError(t, err)
	rows, _ := masked.Rows.Ints()
	for i, r := range rows {
		for v := range cfg.VocabSize {
			require.InDelta(t, all.At(r*cfg.VocabSize+v), some.At(i*cfg.VocabSize+v), 1e-6)
		}
	}

	train := graph.NewTape()
	require.NoError(t, train.Backward(graph.SoftmaxCrossEntropy(m.Logits(train, masked.Batch, masked.Rows), masked.Labels)))
	requireAllGrads(t, m.Params())

	cfg.ID2Label = map[string]string{"0": "a", "1": "b", "2": "c", "3": "d"}
	c, err := NewSequenceClassifier(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{16, 4}, c.Classifier.W.Value.Shape())
	require.Equal(t, "classifier.bias", c.Params()[len(c.Params())-1].Name)
	train = graph.NewTape()
	require.NoError(t, train.Backward(graph.SoftmaxCrossEntropy(c.Logits(train, b), tensor.MustFromSlice([]int64{3, 1}, 2))))
	requireAllGrads(t, c.Params())

	// A masked-LM encoder has no pooler.
	_, pooled := m.Bert.Forward(graph.NewEvalTape(), b)
	require.ErrorContains(t, pooled.Err(), "no pooler")
}

func requireAllGrads(t *testing.T, ps []*graph.Param) {
	t.Helper()
	for _, q := range ps {
		g := q.Grad
		if q.SparseGrad != nil {
			g = q.SparseGrad.Values
		}
		require.NotNil(t, g, q.Name)
		nonzero := false
		for i := range g.Size() {
			nonzero = nonzero || g.At(i) != 0
		}
		require.True(t, nonzero, "%s has a zero gradient", q.Name)
	}
}

// Over many tokens the 80/10/10 rule's frequencies come out: 15% chosen,
// of those 80% [MASK], about 10% another token, 10% unchanged (a random
// replacement may draw the token itself); special and padded positions
// are never chosen.
func TestMaskTokensFrequencies(t *testing.T) {
	const n, vocab, maskID = 200, 1000, 4
	ids := make([][]int, n)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range ids {
		ids[i] = []int{2}
		for range 20 + rng.IntN(80) {
			ids[i] = append(ids[i], 5+rng.IntN(vocab-5))
		}
		ids[i] = append(ids[i], 3)
	}
	b, err := NewBatch(ids, nil)
	require.NoError(t, err)
	special := func(id int) bool { return id < 5 }
	orig := slices.Clone(b.IDs.Int64s())
	m, err := MaskTokens(b, MaskConfig{MaskID: maskID, VocabSize: vocab, Special: special}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	eligible := 0
	for _, s := range ids {
		eligible += len(s) - 2
	}
	rows, _ := m.Rows.Ints()
	labels, _ := m.Labels.Ints()
	require.InDelta(t, 0.15, float64(len(rows))/float64(eligible), 0.01)
	masks, same := 0, 0
	for i, r := range rows {
		require.Equal(t, int(b.IDs.At(r)), labels[i])
		require.False(t, special(labels[i]))
		require.NotZero(t, b.AttentionMask.At(r))
		switch got := int(m.Batch.IDs.At(r)); got {
		case maskID:
			masks++
		case labels[i]:
			same++
		}
	}
	require.InDelta(t, 0.8, float64(masks)/float64(len(rows)), 0.03)
	require.InDelta(t, 0.1, float64(same)/float64(len(rows)), 0.02)
	changed := 0
	for i := range b.IDs.Size() {
		if b.IDs.At(i) != m.Batch.IDs.At(i) {
			changed++
		}
	}
	require.LessOrEqual(t, changed, len(rows))
	require.Equal(t, orig, b.IDs.Int64s(), "the caller's ids are not written")

	// Nothing chosen by chance: the first eligible token is.
	one, err := NewBatch([][]int{{2, 9, 3}}, nil)
	require.NoError(t, err)
	mm, err := MaskTokens(one, MaskConfig{Prob: 1e-9, MaskID: maskID, VocabSize: vocab, Special: special}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	require.Equal(t, []int64{1}, mm.Rows.Int64s())
	require.Equal(t, []int64{9}, mm.Labels.Int64s())

	for _, c := range []struct {
		b    Batch
		cfg  MaskConfig
		want string
	}{
		{one, MaskConfig{MaskID: vocab, VocabSize: vocab}, "mask id"},
		{one, MaskConfig{Prob: 2, MaskID: 1, VocabSize: vocab}, "prob 2"},
		{Batch{}, MaskConfig{MaskID: 1, VocabSize: vocab}, "want IDs"},
		{one, MaskConfig{MaskID: 1, VocabSize: vocab, Special: func(int) bool { return true }}, "no token to mask"},
	} {
		_, err := MaskTokens(c.b, c.cfg, rand.New(rand.NewPCG(1, 1)))
		require.ErrorContains(t, err, c.want)
	}
	_, err = MaskTokens(one, MaskConfig{MaskID: 1, VocabSize: vocab}, nil)
	require.ErrorContains(t, err, "random source")
}
