package bert

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/internal/testdev/devicetest"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/tensor"
)

// With its parameters on a device (the test device, whose kernels are the
// CPU's) a masked-LM training step, dropout included, gives the host's
// loss and gradients: Forward moves the batch's ids, types, positions and
// mask there, and Logits the chosen rows.
func TestMaskedLMStepOnDevice(t *testing.T) {
	cfg := tinyConfig()
	cfg.HiddenDropoutProb, cfg.AttentionDropoutProb = 0.1, 0.1
	b, err := NewBatch([][]int{{2, 7, 8, 9, 3}, {2, 5, 3}}, [][]int{{0, 0, 0, 1, 1}, {0, 1, 1}})
	require.NoError(t, err)
	rows := tensor.MustFromSlice([]int64{1, 3, 6}, 3)
	labels := tensor.MustFromSlice([]int64{7, 9, 5}, 3)
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		m, err := NewMaskedLM(cfg, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			return nil, nil, err
		}
		return m.Params(), func(tape *graph.Tape) *graph.Value {
			l := labels
			if dev := graph.DeviceOf(m.Params()); dev != nil {
				if l, err = tape.Move(labels, dev); err != nil {
					return tape.Fail(err)
				}
			}
			return graph.SoftmaxCrossEntropy(m.Logits(tape, b, rows), l) // Logits moves the rows
		}, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-5))
}
