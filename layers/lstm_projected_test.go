package layers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A ProjectedLSTM fed x·W computes what an LSTM layer with kernel W and the
// same U and bias computes on x, in both directions.
func TestProjectedLSTMEqualsLSTMOnProjections(t *testing.T) {
	for _, rev := range []bool{false, true} {
		full, err := NewLSTM("full", RNNConfig{In: 3, Units: 4, Reverse: rev}, tensor.NewRNG(1))
		require.NoError(t, err)
		proj, err := NewProjectedLSTM("proj", RNNConfig{Units: 4, Reverse: rev}, tensor.NewRNG(2))
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
	for _, cfg := range []RNNConfig{
		{Units: 0},
		{Units: 4, In: 8},
		{Units: 4, Layers: 2},
		{Units: 4, Bidirectional: true},
		{Units: 4, Candidate: ops.ActRelu},
	} {
		_, err := NewProjectedLSTM("bad", cfg, tensor.NewRNG(1))
		require.ErrorContains(t, err, `projected lstm "bad"`, "%+v", cfg)
	}
	_, err := NewProjectedLSTM("in", RNNConfig{In: 16, Units: 4, Peepholes: true}, tensor.NewRNG(1))
	require.NoError(t, err, "In may be given as 4·Units")
}
