package translate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/parallel"
	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// tinyData is a toy translation task: each source word has one target
// word, in the same order.
func tinyData(t *testing.T, n int) *Data {
	rng := tensor.NewRNG(1)
	src := []string{"a", "b", "c", "d", "e", "f"}
	trg := map[string]string{"a": "u", "b": "v", "c": "w", "d": "x", "e": "y", "f": "z"}
	var pairs []parallel.Pair
	for range n {
		var p parallel.Pair
		for range 2 + rng.IntN(4) {
			w := src[rng.IntN(len(src))]
			p.Src, p.Trg = append(p.Src, w), append(p.Trg, trg[w])
		}
		pairs = append(pairs, p)
	}
	d := &Data{}
	var err error
	d.Src, err = parallel.Vocab(pairs, false, 0, 1)
	require.NoError(t, err)
	d.Trg, err = parallel.Vocab(pairs, true, 0, 1)
	require.NoError(t, err)
	d.Train, err = parallel.Dataset(pairs, d.Src, d.Trg, 0)
	require.NoError(t, err)
	k := min(n, 20)
	d.Val, d.Test = d.Train.Take(k), d.Train.Take(k)
	for _, p := range pairs[:k] {
		d.TestRefs = append(d.TestRefs, strings.Join(p.Trg, " "))
	}
	return d
}

func tinySizes(d *Data) Sizes {
	return Sizes{Src: d.Src.Len(), Trg: d.Trg.Len(), Emb: 8, Hidden: 16, Attention: 8}
}

// tinyModel is a model of tinySizes over tinyData(n), and its data.
func tinyModel(t *testing.T, n int, seed uint64) (*Data, *Model) {
	d := tinyData(t, n)
	m, err := New(tinySizes(d), tensor.NewRNG(seed))
	require.NoError(t, err)
	return d, m
}

// oneSeq is sequence q of r as a batch of one.
func oneSeq(t *testing.T, r *tensor.Ragged, q int) *tensor.Ragged {
	v, err := r.Seq(q)
	require.NoError(t, err)
	one, err := tensor.NewRagged(v, []int{0, v.Dim(0)})
	require.NoError(t, err)
	return one
}

func firstBatch(t *testing.T, ds *data.Dataset, n int) *data.Batch {
	loader, err := data.NewLoader(ds, n)
	require.NoError(t, err)
	for b, err := range loader.Batches(1) {
		require.NoError(t, err)
		return b
	}
	return nil
}

// The loss of the batch, decoded sorted by target length with ended
// sequences dropped and projected once, equals the per-step projection
// and cross-entropy of each sequence on its own, averaged over words, and
// so do its gradients.
func TestLossEqualsPerStepLoss(t *testing.T) {
	d, m := tinyModel(t, 30, 1)
	b := firstBatch(t, d.Train, 6)
	src, trg, next := b.Ragged("src"), b.Ragged("trg"), b.Ragged("trg_next")
	require.False(t, slices.IsSortedFunc(trg.Lengths(), func(a, b int) int { return cmp.Compare(b, a) }),
		"the batch should need sorting: %v", trg.Lengths())
	grads := func(loss *graph.Value, tape *graph.Tape) []*tensor.Tensor {
		for _, p := range m.Params() {
			p.ZeroGrad()
		}
		require.NoError(t, tape.Backward(loss))
		var gs []*tensor.Tensor
		for _, p := range m.Params() {
			g, err := p.DenseGrad()
			require.NoError(t, err)
			gs = append(gs, g.Clone())
		}
		return gs
	}
	tape := graph.NewTape()
	loss, words := m.Loss(tape, src, trg, next)
	got, err := loss.Item()
	require.NoError(t, err)
	require.Equal(t, trg.Values.Dim(0), words)
	gotGrads := grads(loss, tape)

	ref := graph.NewTape()
	in, _ := trg.Values.Ints()
	out, _ := next.Values.Ints()
	var terms []*graph.Value
	for q := range trg.BatchSize() {
		s := m.Encode(ref, oneSeq(t, src, q))
		for r := trg.Offsets[q]; r < trg.Offsets[q+1]; r++ {
			s = m.Step(ref, tensor.MustFromSlice([]int64{int64(in[r])}, 1), s)
			lp := graph.Reshape(m.LogProbs(ref, s), -1)
			terms = append(terms, graph.Gather(lp, tensor.MustFromSlice([]int64{int64(out[r])}, 1), 0))
		}
	}
	want := graph.Div(graph.Neg(graph.Sum(graph.Concat(0, terms...))), ref.Const(tensor.Scalar(float32(words))))
	w, err := want.Item()
	require.NoError(t, err)
	require.InDelta(t, w, got, 1e-5)
	for i, g := range grads(want, ref) {
		requireClose(t, g, gotGrads[i], 1e-5, m.Params()[i].Name)
	}
}

// requireClose checks got against want element by element.
func requireClose(t *testing.T, want, got *tensor.Tensor, tol float64, name string) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), name)
	for i := range want.Size() {
		require.InDelta(t, want.At(i), got.At(i), tol, "%s[%d]", name, i)
	}
}

// Dropout acts on a training tape only: on an inference tape the model
// computes what the same parameters without dropout compute; on a training
// tape the loss moves and still back-propagates. A rate outside [0, 1) is
// refused.
func TestDropout(t *testing.T) {
	d := tinyData(t, 30)
	s := tinySizes(d)
	plain, err := New(s, tensor.NewRNG(3))
	require.NoError(t, err)
	s.Dropout = 0.5
	dropped, err := New(s, tensor.NewRNG(3))
	require.NoError(t, err)
	b := firstBatch(t, d.Train, 6)
	lossOn := func(m *Model, tape *graph.Tape) (*graph.Value, float64) {
		l, _ := m.BatchLoss(tape, b)
		v, err := l.Item()
		require.NoError(t, err)
		return l, v
	}
	_, want := lossOn(plain, graph.NewEvalTape())
	_, got := lossOn(dropped, graph.NewEvalTape())
	require.Equal(t, want, got)
	_, trained := lossOn(plain, graph.NewTape())
	require.InDelta(t, want, trained, 1e-5)

	tape := graph.NewTape()
	l, noisy := lossOn(dropped, tape)
	require.Greater(t, math.Abs(noisy-want), 1e-3)
	require.NoError(t, tape.Backward(l))
	require.NotNil(t, dropped.SrcEmb.Table.SparseGrad)
	require.NotNil(t, dropped.Out.W.Grad)

	for _, rate := range []float64{-0.1, 1, math.NaN()} {
		s.Dropout = rate
		_, err := New(s, tensor.NewRNG(3))
		require.ErrorContains(t, err, "dropout", "rate %v", rate)
	}
}

// Training cuts the loss and learns the toy task; batched beam decoding
// gives each source what decoding it alone gives.
func TestTrainAndTranslate(t *testing.T) {
	d, m := tinyModel(t, 200, 2)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Batch, cfg.LR, cfg.Beam = 15, 10, 1e-2, 3
	res, err := Train(m, d, cfg)
	require.NoError(t, err)
	for _, e := range res.Epochs {
		t.Log(e.Epoch, e.TrainLoss, e.Metrics)
	}
	last := res.Epochs[len(res.Epochs)-1]
	require.Less(t, last.TrainLoss, 0.3*res.Epochs[0].TrainLoss)
	require.Greater(t, last.Metrics["bleu"], 50.0)

	b := firstBatch(t, d.Test, 8)
	dc := decode.Config{BeamWidth: 3, MaxLen: 10, Norm: decode.Average}
	all, err := m.Translate(b.Ragged("src"), d.Trg, dc)
	require.NoError(t, err)
	src := b.Ragged("src")
	for q := range src.BatchSize() {
		alone, err := m.Translate(oneSeq(t, src, q), d.Trg, dc)
		require.NoError(t, err)
		require.Equal(t, alone[0], all[q], "source %d", q)
	}
}

func TestLossErrors(t *testing.T) {
	d, m := tinyModel(t, 10, 1)
	b := firstBatch(t, d.Train, 4)
	tape := graph.NewTape()
	loss, _ := m.Loss(tape, b.Ragged("src"), b.Ragged("trg"), nil)
	require.ErrorContains(t, tape.Backward(loss), "translate: loss needs src, trg and trg_next")
	loss, _ = m.Loss(tape, b.Ragged("src"), b.Ragged("trg"), b.Ragged("src"))
	require.ErrorContains(t, tape.Backward(loss), "translate: loss: batches of 4 sources")
	_, err := New(Sizes{Src: 1}, tensor.NewRNG(1))
	require.ErrorContains(t, err, "must be positive")
}

// BenchmarkTranslate decodes 32 random sources of 14 words with beam 4
// and the default sizes at Multi30k's vocabularies (5974 en, 7817 de; an
// untrained model, so every hypothesis runs to MaxLen 20): all sources in
// one batched search against one search per source.
func BenchmarkTranslate(b *testing.B) {
	m, err := New(DefaultSizes(5974, 7817), tensor.NewRNG(1))
	require.NoError(b, err)
	rng := tensor.NewRNG(2)
	seqs := make([][]int64, 32)
	for i := range seqs {
		seqs[i] = []int64{0}
		for range 12 {
			seqs[i] = append(seqs[i], int64(3+rng.IntN(5971)))
		}
		seqs[i] = append(seqs[i], 1)
	}
	words := make([]string, 7817)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	words[0], words[1], words[2] = data.BOS, data.EOS, data.Unk
	trg, err := data.NewVocab(words, data.Unk)
	require.NoError(b, err)
	cfg := decode.Config{BeamWidth: 4, MaxLen: 20, Norm: decode.Average}
	b.Run("batched", func(b *testing.B) {
		src := data.SeqField("src", seqs).Ragged
		b.ResetTimer()
		for range b.N {
			if _, err := m.Translate(src, trg, cfg); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(seqs))/b.Elapsed().Seconds(), "sentences/s")
	})
	b.Run("one_by_one", func(b *testing.B) {
		b.ResetTimer()
		for range b.N {
			for _, s := range seqs {
				if _, err := m.Translate(data.SeqField("src", [][]int64{s}).Ragged, trg, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*len(seqs))/b.Elapsed().Seconds(), "sentences/s")
	})
}

// BenchmarkTrainStep times one Adam step of the default sizes at
// Multi30k's vocabularies on 64 random pairs of 14 source and 7 to 18
// target words (0.69 of the batch's target steps are words, as in
// Multi30k's batches bucketed by source length), and reports the bytes it
// allocates.
func BenchmarkTrainStep(b *testing.B) {
	m, err := New(DefaultSizes(5974, 7817), tensor.NewRNG(1))
	require.NoError(b, err)
	opt, err := optim.NewAdam(m.Params(), optim.LR(1e-3), optim.GlobalClipNorm(5))
	require.NoError(b, err)
	rng := tensor.NewRNG(2)
	var src, trg, next [][]int64
	for range 64 {
		s, t := []int64{0}, []int64{0}
		for range 12 {
			s = append(s, int64(3+rng.IntN(5971)))
		}
		for range 6 + rng.IntN(12) { // ragged targets, about as full as Multi30k's bucketed batches
			t = append(t, int64(3+rng.IntN(7814)))
		}
		src, trg, next = append(src, append(s, 1)), append(trg, t), append(next, append(t[1:], 1))
	}
	sr, tr, nr := data.SeqField("src", src).Ragged, data.SeqField("trg", trg).Ragged, data.SeqField("trg_next", next).Ragged
	tape := graph.NewTape()
	b.ReportAllocs()
	words := 0
	b.ResetTimer()
	for range b.N {
		loss, n := m.Loss(tape, sr, tr, nr)
		words += n
		if err := tape.Backward(loss); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		tape.Release()
	}
	b.ReportMetric(float64(words)/b.Elapsed().Seconds(), "words/s")
}

// A model not built by New reports that, naming the method, instead of
// panicking on its missing layers.
func TestUnbuiltModel(t *testing.T) {
	tape := graph.NewTape()
	for _, m := range []*Model{nil, {}} {
		require.Nil(t, m.Params())
		require.Equal(t, Sizes{}, m.Sizes())
		require.ErrorContains(t, m.Encode(tape, nil).H.Err(), "translate: Model.Encode: a nil model or one not built by New")
		require.ErrorContains(t, m.Step(tape, nil, State{}).H.Err(), "translate: Model.Step: a nil model")
		l, _ := m.Loss(tape, nil, nil, nil)
		require.ErrorContains(t, l.Err(), "translate: Model.Loss: a nil model")
		require.ErrorContains(t, m.LogProbs(tape, State{}).Err(), "translate: Model.LogProbs: a nil model")
		_, err := m.Translate(nil, nil, decode.Config{})
		require.ErrorContains(t, err, "translate: translate: a nil model")
		_, err = Train(m, nil, DefaultConfig())
		require.ErrorContains(t, err, "translate: train: a nil model")
	}
}
