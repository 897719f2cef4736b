package word2vec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/internal/testdev/devicetest"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/tensor"
)

// TestLossOnDevice: with the model's parameters on a device (the test
// device, whose kernels are the CPU's), Loss moves the ids there and gives
// the CPU's loss and gradients, the parameters' gradients on the device.
func TestLossOnDevice(t *testing.T) {
	context := tensor.MustFromSlice([]int64{1, 2, 3, 4, 5, 6, 7, 0}, 2, N-1)
	next := tensor.MustFromSlice([]int64{9, 3})
	step := func(dev tensor.Device) (float64, []*tensor.Tensor) {
		m, err := New(12, tensor.NewRNG(3))
		require.NoError(t, err)
		require.NoError(t, graph.ParamsTo(m.Params(), dev))
		tape := graph.NewTape()
		l := m.Loss(tape, context, next)
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
		require.InDeltaSlice(t, wantG[i].Float32s(), gotG[i].Float32s(), 1e-6)
	}
}
