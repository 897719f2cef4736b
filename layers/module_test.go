package layers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Every layer is in the interface family its input and output decide.
var (
	_ Layer      = (*Linear)(nil)
	_ Layer      = (*Conv2D)(nil)
	_ Layer      = (*BatchNorm)(nil)
	_ Layer      = (*LayerNorm)(nil)
	_ Layer      = Dropout{}
	_ Layer      = Sequential{}
	_ SeqLayer   = (*LSTM)(nil)
	_ SeqLayer   = (*GRU)(nil)
	_ SeqLayer   = (*ProjectedLSTM)(nil)
	_ SeqLayer   = (*SequenceConv)(nil)
	_ SeqReducer = SequencePool{}
	_ Module     = (*Embedding)(nil)
	_ Module     = (*CRF)(nil)
	_ Module     = (*MultiHeadAttention)(nil)
	_ Module     = (*BahdanauAttention)(nil)
	_ Module     = (*AttentionDecoder)(nil)
	_ Module     = Modules{}
	_ Module     = LSTMParams{}
	_ Module     = GRUParams{}
)

func TestParamsListsModulesInOrder(t *testing.T) {
	rng := tensor.NewRNG(1)
	emb, err := NewEmbedding("emb", EmbeddingConfig{Vocab: 5, Dim: 3}, rng)
	require.NoError(t, err)
	lstm, err := NewLSTM("lstm", RNNConfig{In: 3, Units: 2, Peepholes: true}, rng)
	require.NoError(t, err)
	fc1, err := NewLinear("fc1", 2, 2, rng)
	require.NoError(t, err)
	fc2, err := NewLinear("fc2", 2, 1, rng, NoBias())
	require.NoError(t, err)
	crf, err := NewCRF("crf", 2, rng)
	require.NoError(t, err)

	var absent *Linear
	ps := Params(emb, lstm, nil, absent, List([]*Linear{fc1, nil, fc2}), SequencePool{}, crf)
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"emb/embeddings",
		"lstm/l0/fw/kernel", "lstm/l0/fw/recurrent_kernel", "lstm/l0/fw/bias", "lstm/l0/fw/peephole",
		"fc1/kernel", "fc1/bias", "fc2/kernel", "crf/transitions", "crf/start", "crf/stop"}, names)
	require.Empty(t, Params())
	require.Empty(t, Sequential{absent, nil}.Params(), "a nil layer has no parameters")
}

// GRU.Cell is one step of the layer's recurrence; a stacked or
// bidirectional GRU has no single cell.
func TestGRUCell(t *testing.T) {
	rng := tensor.NewRNG(2)
	g, err := NewGRU("g", RNNConfig{In: 3, Units: 2, ResetAfter: true}, rng, DType(tensor.Float64))
	require.NoError(t, err)
	tape := graph.NewTape()
	x, h := tape.Const(randn(3, 4, 3)), tape.Const(randn(4, 4, 2))
	got, err := g.Cell(x, h).Tensor()
	require.NoError(t, err)
	want, err := graph.GRUCell(x, h, g.W[0][0].Weights(tape)).Tensor()
	require.NoError(t, err)
	require.Equal(t, want.Float64s(), got.Float64s())

	bi, err := NewGRU("bi", RNNConfig{In: 3, Units: 2, Bidirectional: true}, rng, DType(tensor.Float64))
	require.NoError(t, err)
	require.ErrorContains(t, bi.Cell(x, h).Err(), "Cell needs a one-layer, one-direction GRU")
	require.ErrorContains(t, (&GRU{}).Cell(x, h).Err(), "Cell needs")
	require.ErrorContains(t, g.Cell(nil, h).Err(), "layers: gru: nil input")
}
