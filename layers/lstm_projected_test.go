package layers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// A ProjectedLSTM fed x·W computes what an LSTM layer with kernel W and the
// same U and bias computes on x, in both directions.
func TestProjectedLSTMEqualsLSTMOnProjections(t *testing.T) {
	for _, rev := range []bool{false, true} {
		full, err := NewLSTM("full", 3, 4, RNNConfig{Reverse: rev}, tensor.NewRNG(1))
		require.NoError(t, err)
		proj, err := NewProjectedLSTM("proj", 4, rev, false, tensor.NewRNG(2))
		require.NoError(t, err)
		require.Equal(t, "proj/recurrent_kernel", proj.U.Name)
		require.Len(t, proj.Params(), 2)
		proj.U.Value, proj.B.Value = full.W[0][0].U.Value, full.W[0][0].B.Value

		tape := graph.NewTape()
		x := graph.Seq{Values: tape.Const(randn32(4, 7, 3)), Offsets: []int{0, 3, 3, 7}}
		want, err := full.Forward(x).Values.Tensor()
		require.NoError(t, err)
		xw := x.With(graph.MatMul(x.Values, tape.Param(full.W[0][0].W), false, false))
		got, err := proj.Forward(xw).Values.Tensor()
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{7, 4}, got.Shape())
		require.InDeltaSlice(t, want.Float32s(), got.Float32s(), 2e-6, "reverse %v", rev)
	}
	_, err := NewProjectedLSTM("bad", 0, false, false, tensor.NewRNG(1))
	require.ErrorContains(t, err, `projected lstm "bad"`)
}
