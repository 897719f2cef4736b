package srl

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/conll05"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// tinyExamples are generated SRL examples over a small vocabulary whose
// tags follow the words, so a model can learn them.
func tinyExamples(n int, seed uint64) []conll05.Example {
	rng := tensor.NewRNG(seed)
	vocab := []string{"the", "cat", "dog", "saw", "ate", "a", "fish", "today"}
	tagOf := map[string]string{"the": "B-A0", "cat": "I-A0", "dog": "I-A0", "a": "B-A1", "fish": "I-A1", "today": "B-AM-TMP"}
	var out []conll05.Example
	for range n {
		verb := []string{"saw", "ate"}[rng.IntN(2)]
		words := []string{"the", vocab[1+rng.IntN(2)], verb, "a", "fish"}
		if rng.IntN(2) == 0 {
			words = append(words, "today")
		}
		labels := make([]string, len(words))
		for i, w := range words {
			labels[i] = tagOf[w]
			if w == verb {
				labels[i] = "B-V"
			}
		}
		out = append(out, conll05.Example{Words: words, Predicate: verb, Labels: labels})
	}
	return out
}

func tinyData(t *testing.T) *Data {
	counts := data.Counter{}
	exs := tinyExamples(40, 1)
	for _, ex := range exs {
		counts.Add(ex.Words...)
	}
	words, err := data.BuildVocab(&counts, data.VocabConfig{Specials: []string{"bos", "eos"}, Unk: data.Unk})
	require.NoError(t, err)
	verbs, err := data.NewVocab([]string{"saw", "ate"}, "")
	require.NoError(t, err)
	labels, err := data.NewVocab([]string{"B-A0", "I-A0", "B-A1", "I-A1", "B-AM-TMP", "I-AM-TMP", "B-V", "I-V", "O"}, "")
	require.NoError(t, err)
	ds, err := conll05.Dataset(exs, words, verbs, labels)
	require.NoError(t, err)
	d := &Data{Words: words, Verbs: verbs, Labels: labels}
	d.Train, d.HeldOut, err = ds.Split(0.25, 1)
	require.NoError(t, err)
	return d
}

func smallSizes(d *Data) Sizes {
	s := d.Sizes()
	s.Hidden, s.Depth = 16, 3
	return s
}

func TestShapesAndParams(t *testing.T) {
	d := tinyData(t)
	m, err := New(smallSizes(d), tensor.NewRNG(1))
	require.NoError(t, err)
	// 3 embeddings, 8 input layers (kernel, bias), 2 mixing pairs, 3 LSTMs
	// (W, U, b, peephole), 2 output layers, the CRF's 3.
	require.Len(t, m.Params(), 3+16+8+12+4+3)
	loader, err := data.NewLoader(d.Train, 4)
	require.NoError(t, err)
	for b, err := range loader.Batches(1) {
		require.NoError(t, err)
		em := m.Emissions(graph.NewTape(), b)
		v, err := em.Values.Tensor()
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{b.Ragged("word").Values.Dim(0), 9}, v.Shape())
		require.Equal(t, b.Ragged("word").Offsets, em.Offsets)
		break
	}
	_, err = New(Sizes{Words: 3, Verbs: 2, Labels: 3, WordDim: 2, MarkDim: 2, Hidden: 6, Depth: 1}, tensor.NewRNG(1))
	require.ErrorContains(t, err, "want positive sizes and Hidden a multiple of 4")
}

// A missing field is an error from the loss, not a panic.
func TestMissingField(t *testing.T) {
	d := tinyData(t)
	m, err := New(smallSizes(d), tensor.NewRNG(1))
	require.NoError(t, err)
	ds, err := data.NewDataset(data.SeqField("word", [][]int64{{1, 2}}), data.SeqField("label", [][]int64{{0, 1}}))
	require.NoError(t, err)
	loader, err := data.NewLoader(ds, 1)
	require.NoError(t, err)
	for b := range loader.Batches(1) {
		tape := graph.NewTape()
		loss, _ := m.Loss(tape, b)
		require.ErrorContains(t, tape.Backward(loss), `srl: the batch has no ragged field "ctx_n2"`)
	}
}

// A few epochs of the book's recipe (at a higher rate, on tiny data) cut
// the cost and reach a useful F1 on the held-out part.
func TestLossDecreasesAndF1(t *testing.T) {
	d := tinyData(t)
	m, err := New(smallSizes(d), tensor.NewRNG(2))
	require.NoError(t, err)
	before, err := Evaluate(m, d, d.HeldOut, 5, nil)
	require.NoError(t, err)
	cfg := BookConfig()
	cfg.Epochs, cfg.Batch, cfg.LR, cfg.CRFLR = 20, 5, 0.1, 1
	res, err := Train(m, d, cfg)
	require.NoError(t, err)
	require.Len(t, res.Epochs, 20)
	require.Less(t, res.Epochs[19].TrainLoss, 0.5*res.Epochs[0].TrainLoss)
	after, err := Evaluate(m, d, d.HeldOut, 5, nil)
	require.NoError(t, err)
	require.Less(t, after.Loss, before.Loss)
	require.Greater(t, after.F1, 0.8)
	require.Equal(t, d.HeldOut.Len(), after.Sequences)
}

// The CRF's parameters step at the CRF factor of the rate.
func TestOptimizerCRFRate(t *testing.T) {
	d := tinyData(t)
	m, err := New(smallSizes(d), tensor.NewRNG(1))
	require.NoError(t, err)
	opt, _, err := Optimizer(m, 0.5, 1e-3)
	require.NoError(t, err)
	tr := m.CRF.Transitions
	before := tr.Value.At(0)
	tr.Grad = tensor.Zeros(tr.Value.DType(), tr.Value.Shape()...)
	tr.Grad.SetAt(0, 1)
	require.NoError(t, opt.Step())
	require.InDelta(t, before-0.5e-3, tr.Value.At(0), 1e-7)
	var _ optim.Optimizer = opt
}

// syntheticBatch is a batch of the given sequence lengths with random ids
// within s's dictionaries.
func syntheticBatch(t testing.TB, s Sizes, seed uint64, lengths ...int) *data.Batch {
	rng := tensor.NewRNG(seed)
	fields := []data.Field{}
	for _, f := range append(Features, "label") {
		n := map[string]int{"verb": s.Verbs, "mark": marks, "label": s.Labels}[f]
		if n == 0 {
			n = s.Words
		}
		seqs := make([][]int64, len(lengths))
		for i, l := range lengths {
			for range l {
				seqs[i] = append(seqs[i], int64(rng.IntN(n)))
			}
		}
		fields = append(fields, data.SeqField(f, seqs))
	}
	ds, err := data.NewDataset(fields...)
	require.NoError(t, err)
	loader, err := data.NewLoader(ds, len(lengths))
	require.NoError(t, err)
	for b, err := range loader.Batches(1) {
		require.NoError(t, err)
		return b
	}
	return nil
}

// BenchmarkTrainStep times one SGD step of the book's model (44k words,
// 3162 verbs, 109 tags) on a batch of 10 sequences of mean length 26.
func BenchmarkTrainStep(b *testing.B) {
	s := Book(44068, 3162, 109)
	m, err := New(s, tensor.NewRNG(1))
	require.NoError(b, err)
	opt, _, err := Optimizer(m, 0.01, 1e-3)
	require.NoError(b, err)
	batch := syntheticBatch(b, s, 1, 22, 31, 9, 40, 26, 18, 35, 27, 14, 38)
	tape := graph.NewTape()
	for b.Loop() {
		loss, _ := m.Loss(tape, batch)
		if err := tape.Backward(loss); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		tape.Release()
	}
	b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "sequences/s")
}

// A model not built by New, or no data, reports that instead of panicking.
func TestUnbuiltModelAndNilData(t *testing.T) {
	for _, m := range []*Model{nil, {}} {
		require.Nil(t, m.Params())
		require.Equal(t, Sizes{}, m.Sizes())
		_, _, err := Optimizer(m, 0.01, 1e-3)
		require.ErrorContains(t, err, "srl: Optimizer: a nil model or one not built by New")
		_, err = Evaluate(m, &Data{}, nil, 1, nil)
		require.ErrorContains(t, err, "srl: evaluate: a nil model or one not built by New")
		require.ErrorContains(t, m.Emissions(graph.NewTape(), nil).Values.Err(), "srl: Model.Emissions: a nil model")
	}
	require.Equal(t, Sizes{}, (*Data)(nil).Sizes())
	d := tinyData(t)
	m, err := New(smallSizes(d), tensor.NewRNG(1))
	require.NoError(t, err)
	_, err = Evaluate(m, nil, d.HeldOut, 4, nil)
	require.ErrorContains(t, err, "srl: evaluate: no label dictionary")
	_, err = Train(m, nil, BookConfig())
	require.ErrorContains(t, err, "srl: train: nil data")
}
