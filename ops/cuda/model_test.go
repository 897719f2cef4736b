//go:build cuda

package cuda

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/srl"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
	"github.com/stretchr/testify/require"
)

// These tests run whole training steps of ordinary models (models/mnist's
// CNN, an LSTM classifier of layers, models/srl and models/translate)
// with the model on the device: no code in them knows the device but the
// move of the parameters. Each is compared with the same step on the CPU
// from the same initial weights.

// stepResult is what one training step leaves: the loss, each trainable
// parameter's gradient, and every parameter after the update, on the host.
type stepResult struct {
	loss   float64
	grads  map[string]*tensor.Tensor
	params map[string]*tensor.Tensor
}

// trainStep builds a model with build, moves it to dev (nil: the CPU),
// takes one step of loss with Adam (lr 1e-3) and returns the result.
func trainStep(t *testing.T, dev tensor.Device, build func() (params []*graph.Param, loss func(*graph.Tape) *graph.Value)) stepResult {
	t.Helper()
	ps, lossFn := build()
	require.NoError(t, graph.ParamsTo(ps, dev))
	opt, err := optim.NewAdam(ps, optim.LR(1e-3))
	require.NoError(t, err)
	tape := graph.NewTape()
	loss := lossFn(tape)
	require.NoError(t, tape.Backward(loss))
	r := stepResult{grads: map[string]*tensor.Tensor{}, params: map[string]*tensor.Tensor{}}
	r.loss, err = loss.Item()
	require.NoError(t, err)
	for _, p := range ps {
		require.Equal(t, dev, p.Value.Device(), "%s left the model's device", p.Name)
		if p.Grad != nil {
			r.grads[p.Name], err = p.Grad.To(nil)
			require.NoError(t, err)
			r.grads[p.Name] = r.grads[p.Name].Clone()
		}
	}
	require.NoError(t, opt.Step())
	tape.Release()
	for _, p := range ps {
		r.params[p.Name], err = p.Value.To(nil)
		require.NoError(t, err)
	}
	return r
}

// requireSameStep compares a device step with the CPU's. Gradients are
// sums of many float32 products accumulated in other orders, so each is
// held to gradTol of its tensor's largest magnitude (δ). Adam's first
// update is lr·g/(|g| + c) with c = eps/sqrt(1-beta2): nearly lr·sign(g),
// so a gradient within δ of 0 may flip sign; each parameter is held to
// float32 rounding plus the change of that function over [g-δ, g+δ], at
// most 2δ·lr·c/(max(|g|-δ, 0) + c)² and never more than 2·lr. A parameter
// without a gradient (batch norm's moving statistics) is held to tolReduce.
func requireSameStep(t *testing.T, want, got stepResult, gradTol float64) {
	t.Helper()
	const lr, eps, beta2 = 1e-3, 1e-7, 0.999
	require.InDelta(t, want.loss, got.loss, 1e-5+1e-4*math.Abs(want.loss), "loss")
	c := eps / math.Sqrt(1-beta2)
	require.Equal(t, len(want.params), len(got.params))
	for name, w := range want.params {
		g, trained := want.grads[name]
		if !trained {
			requireCloseHost(t, w, got.params[name], tolReduce, name)
			continue
		}
		delta := gradTol * maxAbs(g)
		requireCloseHost(t, g, got.grads[name], tol{rtol: 1e-3, atol: delta}, name+" gradient")
		h := got.params[name]
		for i := 0; i < h.Size(); i++ {
			wi, gi := w.At(i), math.Abs(g.At(i))
			d := max(gi-delta, 0) + c
			bound := 1e-6 + 1e-5*math.Abs(wi) + min(2*lr, 2*delta*lr*c/(d*d))
			if math.Abs(h.At(i)-wi) > bound {
				t.Fatalf("%s element %d is %v after the step, want %v within %g (gradient %v)", name, i, h.At(i), wi, bound, g.At(i))
			}
		}
	}
}

func maxAbs(t *tensor.Tensor) float64 {
	m := 0.0
	for i := 0; i < t.Size(); i++ {
		m = max(m, math.Abs(t.At(i)))
	}
	return m
}

// TestMNISTCNNStepMatchesCPU is bar (a) of issue 12: one training step of
// models/mnist's CNN (conv, relu, max pool, batch norm, linear) with its
// own loss (mnist.Loss, its batch moved to the model's device as the
// trainer moves it, train.OnDevice) and Adam, on the device and on the CPU, at the book's batch of 64 and an odd
// 13.
func TestMNISTCNNStepMatchesCPU(t *testing.T) {
	trainSet, _, err := embedded.Load()
	require.NoError(t, err)
	for _, n := range []int{64, 13} {
		t.Run(fmt.Sprint("batch ", n), func(t *testing.T) {
			loader, err := data.NewLoader(trainSet, n, data.Shuffle(2))
			require.NoError(t, err)
			var b *data.Batch
			for b, err = range loader.Batches(0) {
				break
			}
			require.NoError(t, err)
			build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value) {
				net, err := mnist.NewCNN(tensor.NewRNG(1))
				require.NoError(t, err)
				return net.Params(), func(tape *graph.Tape) *graph.Value {
					loss, _ := train.OnDevice(graph.DeviceOf(net.Params()), mnist.Loss(net))(tape, b)
					return loss
				}
			}
			requireSameStep(t, trainStep(t, nil, build), trainStep(t, dev, build), 2e-3)
		})
	}
}

// lstmClassifier is bar (b)'s model: layers' LSTM over a ragged batch of
// token vectors, max pooling over each sequence's steps, a linear layer
// and the softmax cross-entropy with the sequences' classes.
type lstmClassifier struct {
	lstm *layers.LSTM
	fc   *layers.Linear
}

func newLSTMClassifier(t *testing.T, seed uint64) *lstmClassifier {
	rng := rand.New(rand.NewPCG(seed, seed))
	lstm, err := layers.NewLSTM("lstm", layers.RNNConfig{In: 6, Units: 8}, rng)
	require.NoError(t, err)
	fc, err := layers.NewLinear("fc", 8, 3, rng)
	require.NoError(t, err)
	return &lstmClassifier{lstm: lstm, fc: fc}
}

func (m *lstmClassifier) Params() []*graph.Param { return append(m.lstm.Params(), m.fc.Params()...) }

// loss is the step's loss on sequences x [total, 6] with offsets and
// labels [B], moved to the model's device as models/mnist's Loss does.
func (m *lstmClassifier) loss(t *testing.T, tape *graph.Tape, x *tensor.Tensor, offsets []int, labels *tensor.Tensor) *graph.Value {
	dev := graph.DeviceOf(m.Params())
	x, err := tape.Move(x, dev)
	require.NoError(t, err)
	labels, err = tape.Move(labels, dev)
	require.NoError(t, err)
	h := m.lstm.Forward(graph.NewSeq(tape.Const(x), offsets))
	pooled := layers.SequencePool{Kind: ops.SequencePoolMax}.Forward(h)
	return graph.SoftmaxCrossEntropy(m.fc.Forward(pooled), labels)
}

// TestLSTMClassifierStepMatchesCPU is bar (b) of issue 12: one training
// step of an LSTM sequence classifier (four sequences of lengths 3, 1, 5
// and 2) with Adam, on the device and on the CPU.
func TestLSTMClassifierStepMatchesCPU(t *testing.T) {
	offsets := []int{0, 3, 4, 9, 11}
	x := randn(t, rand.New(rand.NewPCG(3, 3)), offsets[len(offsets)-1], 6)
	labels := tensor.MustFromSlice([]int32{2, 0, 1, 2})
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value) {
		m := newLSTMClassifier(t, 5)
		return m.Params(), func(tape *graph.Tape) *graph.Value { return m.loss(t, tape, x, offsets, labels) }
	}
	requireSameStep(t, trainStep(t, nil, build), trainStep(t, dev, build), 1e-4)
}

// firstBatch is the first batch of n of fields, ragged int64 sequences of
// the given lengths with ids drawn below each field's bound.
func firstBatch(t *testing.T, rng *rand.Rand, lengths []int, bounds map[string]int) *data.Batch {
	var fields []data.Field
	for _, name := range slices.Sorted(maps.Keys(bounds)) { // a fixed order of draws
		bound := bounds[name]
		seqs := make([][]int64, len(lengths))
		for q, l := range lengths {
			for range l {
				seqs[q] = append(seqs[q], int64(rng.IntN(bound)))
			}
		}
		fields = append(fields, data.SeqField(name, seqs))
	}
	ds, err := data.NewDataset(fields...)
	require.NoError(t, err)
	loader, err := data.NewLoader(ds, len(lengths))
	require.NoError(t, err)
	for b, err := range loader.Batches(0) {
		require.NoError(t, err)
		return b
	}
	return nil
}

// TestSRLStepMatchesCPU: a training step of models/srl's db_lstm (LSTMs
// with relu candidates and sigmoid cell outputs, alternating direction,
// under a CRF), its batch moved to the device as the trainer moves it
// (train.OnDevice, as plumb train srl --device cuda runs it), and its
// Viterbi decoding, match the CPU's.
func TestSRLStepMatchesCPU(t *testing.T) {
	sizes := srl.Sizes{Words: 20, Verbs: 4, Labels: 9, WordDim: 8, MarkDim: 3, Hidden: 16, Depth: 3}
	bounds := map[string]int{"verb": sizes.Verbs, "mark": 2, "label": sizes.Labels}
	for _, f := range srl.Features[:6] {
		bounds[f] = sizes.Words
	}
	b := firstBatch(t, rand.New(rand.NewPCG(4, 4)), []int{5, 1, 7}, bounds)
	var models []*srl.Model
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value) {
		m, err := srl.New(sizes, tensor.NewRNG(6))
		require.NoError(t, err)
		models = append(models, m)
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			l, _ := train.OnDevice(graph.DeviceOf(m.Params()), m.Loss)(tape, b)
			return l
		}
	}
	requireSameStep(t, trainStep(t, nil, build), trainStep(t, dev, build), 1e-4)
	var paths [2][][]int
	for i, m := range models {
		tape := graph.NewEvalTape()
		moved, err := train.MoveBatch(tape, graph.DeviceOf(m.Params()), b) // as train.EvaluateOn moves it
		require.NoError(t, err)
		paths[i], err = m.Decode(tape, moved)
		require.NoError(t, err)
		tape.Release()
	}
	require.Equal(t, paths[0], paths[1], "Viterbi paths on the CPU and on the device")
}

// TestTranslateStepMatchesCPU: a training step of models/translate's
// encoder-decoder (bidirectional GRU, additive attention, GRU cell steps,
// the fused output projection and loss), its source batch moved to the
// device as the trainer moves it (train.MoveBatch; the targets are read on
// the host), matches the CPU's, and so does beam search with the model on
// the device.
func TestTranslateStepMatchesCPU(t *testing.T) {
	sizes := translate.Sizes{Src: 15, Trg: 12, Emb: 8, Hidden: 16, Attention: 8}
	rng := rand.New(rand.NewPCG(7, 7))
	b := firstBatch(t, rng, []int{4, 2, 6}, map[string]int{"src": sizes.Src})
	trg := firstBatch(t, rng, []int{3, 5, 2}, map[string]int{"trg": sizes.Trg, "trg_next": sizes.Trg})
	var models []*translate.Model
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value) {
		m, err := translate.New(sizes, tensor.NewRNG(8))
		require.NoError(t, err)
		models = append(models, m)
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			src, err := train.MoveBatch(tape, graph.DeviceOf(m.Params()), b)
			if err != nil {
				return tape.Fail(err)
			}
			l, _ := m.Loss(tape, src.Ragged("src"), trg.Ragged("trg"), trg.Ragged("trg_next"))
			return l
		}
	}
	// At initialisation the attention's query gradients are about 1e-9,
	// sums that mostly cancel, so they get mnist's CNN's 2e-3 of the largest.
	requireSameStep(t, trainStep(t, nil, build), trainStep(t, dev, build), 2e-3)
	words := make([]string, sizes.Trg)
	for i := range words {
		words[i] = fmt.Sprint("w", i)
	}
	words[0], words[1] = data.BOS, data.EOS
	vocab, err := data.NewVocab(words, "")
	require.NoError(t, err)
	var out [2][][]string
	for i, m := range models {
		out[i], err = m.Translate(b.Ragged("src"), vocab, decode.Config{BeamWidth: 3, MaxLen: 6, Norm: decode.Average})
		require.NoError(t, err)
	}
	require.Equal(t, out[0], out[1], "beam search on the CPU and on the device")
}
