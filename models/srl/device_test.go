package srl

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/internal/testdev/devicetest"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// TestLossOnDevice: with the model's parameters on a device (the test
// device, whose kernels are the CPU's) and the batch moved there as the
// trainer moves it (train.MoveBatch), Loss gives the CPU's loss and
// gradients, the gradients on the device.
func TestLossOnDevice(t *testing.T) {
	d := tinyData(t)
	loader, err := data.NewLoader(d.Train, 4)
	require.NoError(t, err)
	var b *data.Batch
	for b = range loader.Batches(0) {
		break
	}
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		m, err := New(smallSizes(d), tensor.NewRNG(3))
		if err != nil {
			return nil, nil, err
		}
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			l, _ := train.OnDevice(graph.DeviceOf(m.Params()), m.Loss)(tape, b)
			return l
		}, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-6))
}

// TestTrainAndEvaluateOnDevice: two epochs of the book's SGD with the
// model on a device, then the held-out evaluation (Viterbi decoding read
// on the host), give the host run's losses, F1 and parameters.
func TestTrainAndEvaluateOnDevice(t *testing.T) {
	d := tinyData(t)
	run := func(dev tensor.Device) ([]float64, Result, []*tensor.Tensor) {
		m, err := New(smallSizes(d), tensor.NewRNG(4))
		require.NoError(t, err)
		require.NoError(t, graph.ParamsTo(m.Params(), dev))
		cfg := BookConfig()
		cfg.Epochs, cfg.Batch, cfg.LR, cfg.CRFLR = 2, 5, 0.1, 1
		res, err := Train(m, d, cfg)
		require.NoError(t, err)
		var losses []float64
		for _, e := range res.Epochs {
			losses = append(losses, e.TrainLoss)
		}
		ev, err := Evaluate(m, d, d.HeldOut, 3, nil)
		require.NoError(t, err)
		require.Equal(t, dev, graph.DeviceOf(m.Params()), "the model stays on its device")
		var ps []*tensor.Tensor
		for _, p := range m.Params() {
			h, err := p.Value.To(nil)
			require.NoError(t, err)
			ps = append(ps, h)
		}
		return losses, ev, ps
	}
	wantLosses, want, wantPs := run(nil)
	losses, got, ps := run(testdev.New("test:0"))
	require.InDeltaSlice(t, wantLosses, losses, 1e-5)
	require.InDelta(t, want.Loss, got.Loss, 1e-5)
	require.Equal(t, want.PRF, got.PRF)
	require.Equal(t, want.Sequences, got.Sequences)
	for i := range wantPs {
		require.InDeltaSlice(t, wantPs[i].Float32s(), ps[i].Float32s(), 1e-5, "parameter %d", i)
	}
}
