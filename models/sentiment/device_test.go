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
)

// TestLossOnDevice: with either model's parameters on a device (the test
// device, whose kernels are the CPU's), Loss moves the batch there and
// gives the CPU's loss and gradients, the gradients on the device.
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
		step := func(dev tensor.Device) (float64, []*tensor.Tensor) {
			m, err := New(name, 10, tensor.NewRNG(3))
			require.NoError(t, err)
			require.NoError(t, graph.ParamsTo(m.Params(), dev))
			tape := graph.NewTape()
			l, _ := Loss(m)(tape, b)
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
		require.InDelta(t, want, got, 1e-6, name)
		require.Len(t, gotG, len(wantG), name)
		for i := range wantG {
			require.InDeltaSlice(t, wantG[i].Float32s(), gotG[i].Float32s(), 1e-6, name)
		}
	}
}
