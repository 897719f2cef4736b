package translate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/internal/testdev/devicetest"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// TestLossOnDevice: with the model's parameters on a device (the test
// device, whose kernels are the CPU's) and the batch's sources moved there
// as the trainer moves them (train.MoveBatch, the targets left on the
// host), BatchLoss, which moves each step's previous words and the labels,
// gives the CPU's loss and gradients, the gradients on the device.
func TestLossOnDevice(t *testing.T) {
	d := tinyData(t, 30)
	b := firstBatch(t, d.Train, 6)
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		m, err := New(tinySizes(d), tensor.NewRNG(4))
		if err != nil {
			return nil, nil, err
		}
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			l, _ := train.OnDevice(graph.DeviceOf(m.Params()), m.BatchLoss, HostFields...)(tape, b)
			return l
		}, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-6))
}

// TestTranslateOnDevice: beam search with the model on a device (the
// state's reordering, the log-probabilities read on the host) gives the
// host's translations and validation loss.
func TestTranslateOnDevice(t *testing.T) {
	d, m := tinyModel(t, 30, 5)
	b := firstBatch(t, d.Test, 8)
	dc := decode.Config{BeamWidth: 3, MaxLen: 10, Norm: decode.Average}
	want, err := m.Translate(b.Ragged("src"), d.Trg, dc)
	require.NoError(t, err)
	wantLoss, err := m.MeanLoss(d.Val, 7)
	require.NoError(t, err)

	dev := testdev.New("test:0")
	require.NoError(t, graph.ParamsTo(m.Params(), dev))
	got, err := m.Translate(b.Ragged("src"), d.Trg, dc)
	require.NoError(t, err)
	require.Equal(t, want, got)
	loss, err := m.MeanLoss(d.Val, 7)
	require.NoError(t, err)
	require.InDelta(t, wantLoss, loss, 1e-6)
	require.Equal(t, dev, graph.DeviceOf(m.Params()), "nothing moved the model back")
}
