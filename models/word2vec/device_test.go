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
// device, whose kernels are the CPU's) and the ids moved there as the
// trainer moves a batch, Loss gives the CPU's loss and gradients, the
// parameters' gradients on the device.
func TestLossOnDevice(t *testing.T) {
	context := tensor.MustFromSlice([]int64{1, 2, 3, 4, 5, 6, 7, 0}, 2, N-1)
	next := tensor.MustFromSlice([]int64{9, 3})
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		m, err := New(12, tensor.NewRNG(3))
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			dev := graph.DeviceOf(m.Params())
			c, err := tape.Move(context, dev)
			if err != nil {
				return tape.Fail(err)
			}
			n, err := tape.Move(next, dev)
			if err != nil {
				return tape.Fail(err)
			}
			return m.Loss(tape, c, n)
		}, err
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-6))
}
