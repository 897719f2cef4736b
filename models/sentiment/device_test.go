package sentiment

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

// TestLossOnDevice: with either model's parameters on a device (the test
// device, whose kernels are the CPU's) and the batch moved there as the
// trainer moves it (train.MoveBatch), Loss gives the CPU's loss and
// gradients, the gradients on the device.
func TestLossOnDevice(t *testing.T) {
	seqs := [][]int64{{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3, 5, 8}}
	ds, err := data.NewDataset(data.SeqField("words", seqs), data.DenseField("label", tensor.MustFromSlice([]int64{1, 0})))
	require.NoError(t, err)
	loader, err := data.NewLoader(ds, 2)
	require.NoError(t, err)
	var b *data.Batch
	for b = range loader.Batches(0) {
		break
	}
	for _, name := range []string{"cnn", "lstm"} {
		build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
			m, err := New(name, 10, tensor.NewRNG(3))
			if err != nil {
				return nil, nil, err
			}
			return m.Params(), func(tape *graph.Tape) *graph.Value {
				l, _ := train.OnDevice(graph.DeviceOf(m.Params()), Loss(m))(tape, b)
				return l
			}, nil
		}
		require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-6), name)
	}
}
