package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

func randomImages(seed uint64, n int) [][]float32 {
	rng := tensor.NewRNG(seed)
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, Pixels)
		for j := range out[i] {
			out[i][j] = rng.Float32()
		}
	}
	return out
}

// referenceSoftmax runs net on one image on its own eval tape and takes
// the softmax of the logits in float64: the plain path the predictor's
// batches must match.
func referenceSoftmax(t *testing.T, logits *graph.Value) []float64 {
	t.Helper()
	x, err := logits.Tensor()
	require.NoError(t, err)
	row := x.Float32s()
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, float64(v))
	}
	out := make([]float64, len(row))
	sum := 0.0
	for i, v := range row {
		out[i] = math.Exp(float64(v) - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

func assertMatches(t *testing.T, want []float64, got Prediction, what string) {
	t.Helper()
	require.Len(t, got.Probs, len(want), what)
	best, sum := 0, 0.0
	for c := range want {
		assert.InDelta(t, want[c], float64(got.Probs[c]), 1e-5, "%s: class %d", what, c)
		if want[c] > want[best] {
			best = c
		}
		sum += float64(got.Probs[c])
	}
	assert.InDelta(t, 1, sum, 1e-5, what)
	assert.Equal(t, best, got.Class, what)
}

func TestDigitPredictorMatchesOneImageAtATime(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		t.Run(name, func(t *testing.T) {
			net, err := mnist.New(name, tensor.NewRNG(3))
			require.NoError(t, err)
			p, err := NewDigitPredictor(net)
			require.NoError(t, err)
			imgs := randomImages(11, 5)
			got, err := p.Predict(context.Background(), imgs)
			require.NoError(t, err)
			require.Len(t, got, len(imgs))
			for i, img := range imgs {
				tape := graph.NewEvalTape()
				want := referenceSoftmax(t, net.Forward(tape.Const(tensor.MustFromSlice(img, 1, 1, 28, 28))))
				assertMatches(t, want, got[i], fmt.Sprintf("image %d", i))
			}
		})
	}
}

// TestPredictorsConcurrent runs one model from several goroutines at once
// (each call on its own tape from the pool) and checks every answer
// against the serial one; under -race it checks that the tapes share
// nothing but the read-only parameters.
// digitEngines returns both engines' predictors of net: the eval tape's
// and the compiled plans' (max batch 4, so batches of 3 are padded and
// larger ones run in chunks).
func digitEngines(t *testing.T, net mnist.Model) map[string]Predictor[[]float32, Prediction] {
	t.Helper()
	tape, err := NewDigitPredictor(net)
	require.NoError(t, err)
	plan, err := NewDigitPlanPredictor(net, 4)
	require.NoError(t, err)
	return map[string]Predictor[[]float32, Prediction]{"tape": tape, "plan": plan}
}

// Many goroutines share one predictor at mixed batch sizes (the tape
// engine's pool of tapes, the plan engine's plans and their arenas); run
// under -race.
func TestPredictorsConcurrent(t *testing.T) {
	net, err := mnist.New("cnn", tensor.NewRNG(4))
	require.NoError(t, err)
	imgs := randomImages(12, 6)
	ref, err := NewDigitPredictor(net)
	require.NoError(t, err)
	want, err := ref.Predict(context.Background(), imgs)
	require.NoError(t, err)
	for engine, p := range digitEngines(t, net) {
		t.Run(engine, func(t *testing.T) {
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Go(func() {
					for round := range 3 {
						lo := (g + round) % len(imgs)
						hi := min(lo+1+g, len(imgs))
						got, err := p.Predict(context.Background(), imgs[lo:hi])
						if !assert.NoError(t, err) {
							return
						}
						for i := range got {
							assert.InDeltaSlice(t, want[lo+i].Probs, got[i].Probs, 1e-5, "goroutine %d round %d image %d", g, round, lo+i)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestDigitPredictorErrors(t *testing.T) {
	_, err := NewDigitPredictor(nil)
	assert.ErrorContains(t, err, "nil model")
	_, err = NewDigitPlanPredictor(nil, 8)
	assert.ErrorContains(t, err, "nil model")
	net, err := mnist.New("mlp", tensor.NewRNG(1))
	require.NoError(t, err)
	_, err = NewDigitPlanPredictor(net, 0)
	assert.ErrorContains(t, err, "max batch 0, want at least 1")
	for engine, p := range digitEngines(t, net) {
		out, err := p.Predict(context.Background(), nil)
		assert.NoError(t, err, engine)
		assert.Empty(t, out, engine)
		_, err = p.Predict(context.Background(), [][]float32{make([]float32, Pixels), make([]float32, 10)})
		assert.ErrorContains(t, err, "image 1 has 10 values, want 784", engine)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = p.Predict(ctx, randomImages(1, 1))
		assert.ErrorIs(t, err, context.Canceled, engine)
	}
}

// tinyVocab is a dictionary of n words w0.. and <unk> last.
func tinyVocab(t *testing.T, n int) *data.Vocab {
	t.Helper()
	words := make([]string, n+1)
	for i := range n {
		words[i] = fmt.Sprintf("w%d", i)
	}
	words[n] = data.Unk
	v, err := data.NewVocab(words, data.Unk)
	require.NoError(t, err)
	return v
}

func TestSentimentPredictorMatchesOneReviewAtATime(t *testing.T) {
	v := tinyVocab(t, 30)
	for _, name := range []string{"cnn", "lstm"} {
		t.Run(name, func(t *testing.T) {
			net, err := sentiment.New(name, v.Len(), tensor.NewRNG(5))
			require.NoError(t, err)
			p, err := NewSentimentPredictor(net, v)
			require.NoError(t, err)
			texts := []string{"W1 w2, w3!", "w4", "w5 w6 w7 w8 w9 w10 w11 unknown-word w29", "w0 w0"}
			batch := make([][]int64, len(texts))
			for i, text := range texts {
				batch[i], err = p.Encode(text)
				require.NoError(t, err)
			}
			assert.Equal(t, []int64{1, 2, 3}, batch[0], "tokenized as the IMDB reader does")
			assert.Equal(t, int64(v.UnkID()), batch[2][7], "an unknown word is <unk>")
			got, err := p.Predict(context.Background(), batch)
			require.NoError(t, err)
			require.Len(t, got, len(batch))
			for i, ids := range batch {
				tape := graph.NewEvalTape()
				words, err := tensor.NewRagged(tensor.MustFromSlice(ids, len(ids)), []int{0, len(ids)})
				require.NoError(t, err)
				want := referenceSoftmax(t, net.Logits(tape, words))
				assertMatches(t, want, got[i], fmt.Sprintf("review %d", i))
			}
		})
	}
}

func TestSentimentPredictorErrors(t *testing.T) {
	v := tinyVocab(t, 5)
	net, err := sentiment.New("cnn", v.Len(), tensor.NewRNG(1))
	require.NoError(t, err)
	_, err = NewSentimentPredictor(nil, v)
	assert.ErrorContains(t, err, "needs a model and a vocabulary")
	_, err = NewSentimentPredictor(net, nil)
	assert.ErrorContains(t, err, "needs a model and a vocabulary")
	p, err := NewSentimentPredictor(net, v)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		batch [][]int64
		want  string
	}{
		{"empty review", [][]int64{{1}, {}}, "review 1 is empty"},
		{"id past the vocabulary", [][]int64{{1, 6}}, "id 6 outside the vocabulary [0, 6)"},
		{"negative id", [][]int64{{-1}}, "id -1 outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Predict(context.Background(), tc.batch)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	for _, text := range []string{"", "  ", "!!! ... ?"} {
		_, err := p.Encode(text)
		assert.ErrorIs(t, err, errEmptyReview, "%q", text)
	}
}
