package layers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// TestReverseRNNLayers: a Reverse layer computes what the forward layer
// with the same weights computes on the reversed sequences, reversed back,
// for the LSTM and both GRU forms, on a ragged batch with empty and
// one-step sequences; its parameters are named bw.
func TestReverseRNNLayers(t *testing.T) {
	type layer interface {
		Forward(graph.Seq) graph.Seq
		Params() []*graph.Param
	}
	newPair := func(t *testing.T, kind string, cfg RNNConfig) (fw, bw layer) {
		rng := tensor.NewRNG(3)
		cfg.In, cfg.Units = 3, 5
		rev := cfg
		rev.Reverse = true
		var err1, err2 error
		switch kind {
		case "lstm":
			fw, err1 = NewLSTM("r", cfg, rng)
			bw, err2 = NewLSTM("r", rev, rng)
		default:
			fw, err1 = NewGRU("r", cfg, rng)
			bw, err2 = NewGRU("r", rev, rng)
		}
		require.NoError(t, err1)
		require.NoError(t, err2)
		for i, p := range bw.Params() {
			require.Contains(t, p.Name, "/bw/")
			p.Value = fw.Params()[i].Value.Clone()
		}
		return fw, bw
	}
	for _, tc := range []struct {
		kind string
		cfg  RNNConfig
	}{
		{"lstm", RNNConfig{}},
		{"lstm", RNNConfig{Layers: 2}},
		{"gru", RNNConfig{}},
		{"gru", RNNConfig{ResetAfter: true}},
	} {
		fw, bw := newPair(t, tc.kind, tc.cfg)
		tape := graph.NewTape()
		x := graph.Seq{Values: tape.Const(randn32(5, 8, 3)), Offsets: []int{0, 4, 4, 5, 8}}
		want, err := graph.SequenceReverse(fw.Forward(graph.SequenceReverse(x))).Values.Tensor()
		require.NoError(t, err)
		got, err := bw.Forward(x).Values.Tensor()
		require.NoError(t, err)
		require.InDeltaSlice(t, want.Float32s(), got.Float32s(), 1e-6, "%s %+v", tc.kind, tc.cfg)
	}
	_, err := NewLSTM("both", RNNConfig{In: 3, Units: 5, Reverse: true, Bidirectional: true}, tensor.NewRNG(1))
	require.ErrorContains(t, err, `lstm "both": Reverse and Bidirectional`)
}
