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
)

// TestLossOnDevice: with the model's parameters on a device (the test
// device, whose kernels are the CPU's), BatchLoss moves the batch there
// and gives the CPU's loss and gradients, the gradients on the device.
func TestLossOnDevice(t *testing.T) {
	d, err := FromMovieLens(toyMovieLens())
	require.NoError(t, err)
	loader, err := data.NewLoader(d.Test, 7)
	require.NoError(t, err)
	var b *data.Batch
	for b = range loader.Batches(0) {
		break
	}
	step := func(dev tensor.Device) (float64, []*tensor.Tensor) {
		m, err := New(d.Sizes, tensor.NewRNG(1))
		require.NoError(t, err)
		require.NoError(t, graph.ParamsTo(m.Params(), dev))
		tape := graph.NewTape()
		l, _ := m.BatchLoss(tape, b)
		require.NoError(t, tape.Backward(l))
		v, err := l.Item()
		require.NoError(t, err)
		grads, err := devicetest.HostGrads(m.Params(), dev)
		require.NoError(t, err)
		tape.Release()
		return v, grads
	}
	want, wantG := step(nil)
	got, gotG := step(testdev.New("test:0"))
	require.InDelta(t, want, got, 1e-6)
	require.Len(t, gotG, len(wantG))
	for i := range wantG {
		require.InDeltaSlice(t, wantG[i].Float32s(), gotG[i].Float32s(), 1e-5)
	}
}
