package recommender

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
// trainer moves it (train.MoveBatch, the scores left on the host),
// BatchLoss gives the CPU's loss and gradients, the gradients on the
// device.
func TestLossOnDevice(t *testing.T) {
	d, err := FromMovieLens(toyMovieLens())
	require.NoError(t, err)
	loader, err := data.NewLoader(d.Test, 7)
	require.NoError(t, err)
	var b *data.Batch
	for b = range loader.Batches(0) {
		break
	}
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		m, err := New(d.Sizes, tensor.NewRNG(1))
		if err != nil {
			return nil, nil, err
		}
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			l, _ := train.OnDevice(graph.DeviceOf(m.Params()), m.BatchLoss, HostFields...)(tape, b)
			return l
		}, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-5))
}
