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
			// The caller moves the batch, as the trainer does.
			dev := graph.DeviceOf(m.Params())
			db, err := b.To(tape, m.Bert, dev)
			if err != nil {
				return tape.Fail(err)
			}
			l, r := labels, rows
			if dev != nil {
				if l, err = tape.Move(labels, dev); err == nil {
					r, err = tape.Move(rows, dev)
				}
				if err != nil {
					return tape.Fail(err)
				}
			}
			return graph.SoftmaxCrossEntropy(m.Logits(tape, db, r), l)
		}, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-5))
}

// TestForwardWantsTheBatchWhereTheParametersAre: the model does not move
// a caller's batch; a host batch for a model on a device is an error
// naming both places, and Batch.To moves it.
func TestForwardWantsTheBatchWhereTheParametersAre(t *testing.T) {
	m, err := New(tinyConfig(), rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	b, err := NewBatch([][]int{{2, 7, 3}, {2, 3}}, nil)
	require.NoError(t, err)
	dev := testdev.New("test:0")
	for _, p := range m.Params() {
		moved, err := p.Value.To(dev)
		require.NoError(t, err)
		p.Value = moved
	}
	tape := graph.NewEvalTape()
	h, _ := m.Forward(tape, b)
	_, err = h.Tensor()
	require.ErrorContains(t, err, "IDs on host memory, the parameters on test:0")

	db, err := b.To(tape, m, dev)
	require.NoError(t, err)
	h, _ = m.Forward(tape, db)
	_, err = h.Tensor()
	require.NoError(t, err)
}
