package layers

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// inferenceModel is a small model of every kind of layer that keeps
// weights or state: Conv2D, batch norm (in eval mode, on its moving
// statistics), Linear, LSTM and multi-head attention.
type inferenceModel struct {
	conv *Conv2D
	bn   *BatchNorm
	fc   *Linear
	lstm *LSTM
	mha  *MultiHeadAttention
}

func newInferenceModel(t *testing.T) *inferenceModel {
	rng := tensor.NewRNG(10)
	var m inferenceModel
	var err error
	m.conv, err = NewConv2D("conv", Conv2DConfig{In: 1, Out: 2, KH: 3, KW: 3}, rng)
	require.NoError(t, err)
	m.bn, err = NewBatchNorm("bn", 2)
	require.NoError(t, err)
	m.bn.MovingMean.Value.Fill(0.1) // statistics other than the identity's
	m.bn.MovingVar.Value.Fill(2)
	m.fc, err = NewLinear("fc", 2*4*4, 4, rng)
	require.NoError(t, err)
	m.lstm, err = NewLSTM("lstm", RNNConfig{In: 4, Units: 4}, rng)
	require.NoError(t, err)
	m.mha, err = NewMultiHeadAttention("mha", MultiHeadAttentionConfig{Heads: 2, KeyDim: 2, QueryDim: 4, ValueDim: 4, OutDim: 4}, rng)
	require.NoError(t, err)
	return &m
}

// forward runs the model on images [6, 1, 6, 6] on its own eval tape:
// conv, batch norm, flatten, linear, then the six rows as one sequence
// through the LSTM, and self-attention over it. It returns the output's
// values.
func (m *inferenceModel) forward(images *tensor.Tensor) ([]float32, error) {
	tape := graph.NewEvalTape()
	x := m.bn.Forward(m.conv.Forward(tape.Const(images)))
	x = m.fc.Forward(graph.Flatten(x))                         // [6, 4]
	seq := m.lstm.Forward(graph.NewSeq(x, []int{0, 6})).Values // [6, 4]
	y := m.mha.Forward(graph.Reshape(seq, 1, 6, 4), nil, graph.Reshape(seq, 1, 6, 4), ops.AttentionAttrs{Causal: true})
	out, err := y.Tensor()
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), out.Float32s()...), nil
}

// Inference on one shared model from many goroutines, each on its own
// eval tape, is safe: every goroutine gets the serial result, and
// `go test -race` reports no race (the documented concurrent use; see the
// package doc).
func TestConcurrentInferenceSharedModel(t *testing.T) {
	m := newInferenceModel(t)
	images := make([]*tensor.Tensor, 4)
	want := make([][]float32, len(images))
	for i := range images {
		var err error
		images[i], err = randn(uint64(20+i), 6, 1, 6, 6).Cast(tensor.Float32)
		require.NoError(t, err)
		want[i], err = m.forward(images[i])
		require.NoError(t, err)
	}
	before := append([]float32(nil), m.bn.MovingMean.Value.Float32s()...)
	const goroutines, rounds = 8, 3
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				i := (g + r) % len(images)
				got, err := m.forward(images[i])
				if err == nil && !slices.Equal(got, want[i]) {
					err = errMismatch
				}
				if err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for g, err := range errs {
		require.NoError(t, err, "goroutine %d", g)
	}
	require.Equal(t, before, m.bn.MovingMean.Value.Float32s(), "eval mode leaves the moving statistics")
}

var errMismatch = errors.New("a goroutine's output differs from the serial one")
