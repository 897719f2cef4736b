package mnist

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// trainSteps runs steps Adam steps of model on one fixed random batch,
// either on one tape released after each step (as Train does) or on a new
// tape per step, and returns the parameters and the losses.
func trainSteps(t *testing.T, model string, steps int, release bool) ([]*graph.Param, []float64) {
	net, err := New(model, tensor.NewRNG(2))
	require.NoError(t, err)
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	require.NoError(t, err)
	rng := tensor.NewRNG(1)
	x, err := tensor.RandUniform(rng, tensor.Float32, 0, 1, 17, 1, 28, 28)
	require.NoError(t, err)
	labels := make([]int64, 17)
	for i := range labels {
		labels[i] = int64(rng.IntN(10))
	}
	y := tensor.MustFromSlice(labels)
	var losses []float64
	tape := graph.NewTape()
	for range steps {
		if !release {
			tape = graph.NewTape()
		}
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(x)), y)
		require.NoError(t, tape.Backward(loss))
		require.NoError(t, opt.Step())
		l, err := loss.Item()
		require.NoError(t, err)
		losses = append(losses, l)
		if release {
			tape.Release()
		}
	}
	return net.Params(), losses
}

// Reusing a released tape's memory changes no result: the parameters and
// losses of a few steps equal, bit for bit, those of a new tape per step.
func TestReleasedTapeTrainsIdentically(t *testing.T) {
	for _, model := range []string{"mlp", "cnn"} {
		t.Run(model, func(t *testing.T) {
			want, wantLoss := trainSteps(t, model, 3, false)
			got, gotLoss := trainSteps(t, model, 3, true)
			require.Equal(t, wantLoss, gotLoss)
			for i := range want {
				require.Equal(t, want[i].Value.Raw(), got[i].Value.Raw(), want[i].Name)
			}
		})
	}
}
