package layers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Every exported function and method of package layers, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	tape := graph.NewTape()
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	v := tape.Var(x)
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{tape, v, x, graph.NewSeq(v, []int{0, 1, 3}), tensor.NewRNG(1)},
		Funcs: map[string]any{
			"NewProjectedLSTM":               layers.NewProjectedLSTM,
			"NewMultiHeadAttention":          layers.NewMultiHeadAttention,
			"NewBahdanauAttention":           layers.NewBahdanauAttention,
			"NewAttentionDecoder":            layers.NewAttentionDecoder,
			"NewConv2D":                      layers.NewConv2D,
			"NewCRF":                         layers.NewCRF,
			"NewEmbedding":                   layers.NewEmbedding,
			"DType":                          layers.DType,
			"NoBias":                         layers.NoBias,
			"Name":                           layers.Name,
			"Summary":                        layers.Summary,
			"Trainable":                      layers.Trainable,
			"Params":                         layers.Params,
			"List":                           layers.List[*layers.Linear],
			"NewLinear":                      layers.NewLinear,
			"NewBatchNorm":                   layers.NewBatchNorm,
			"NewLayerNorm":                   layers.NewLayerNorm,
			"NewDropout":                     layers.NewDropout,
			"NewLSTM":                        layers.NewLSTM,
			"NewGRU":                         layers.NewGRU,
			"NewSequenceConv":                layers.NewSequenceConv,
			"ScaledDotProductAttention":      layers.ScaledDotProductAttention,
			"LabelSmoothedCrossEntropy":      layers.LabelSmoothedCrossEntropy,
			"Unpad":                          layers.Unpad,
			"SinusoidalPositions":            layers.SinusoidalPositions,
			"NewPositionEmbedding":           layers.NewPositionEmbedding,
			"NewSinusoidalPositionEmbedding": layers.NewSinusoidalPositionEmbedding,
			"NewTiedOutput":                  layers.NewTiedOutput,
			"NewTransformerEncoderLayer":     layers.NewTransformerEncoderLayer,
			"NewTransformerDecoderLayer":     layers.NewTransformerDecoderLayer,
		},
		Types: []any{
			(*layers.ProjectedLSTM)(nil),
			(*layers.MultiHeadAttention)(nil),
			(*layers.BahdanauAttention)(nil),
			(*layers.Memory)(nil),
			(*layers.AttentionDecoder)(nil),
			(*layers.DecoderState)(nil),
			(*layers.Conv2D)(nil),
			(*layers.Conv2DConfig)(nil),
			(*layers.EmbeddingConfig)(nil),
			(*layers.MultiHeadAttentionConfig)(nil),
			(*layers.BahdanauAttentionConfig)(nil),
			(*layers.AttentionDecoderConfig)(nil),
			(*layers.SequenceConvConfig)(nil),
			(*layers.MaxPool2D)(nil),
			(*layers.AvgPool2D)(nil),
			(*layers.Flatten)(nil),
			(*layers.CRF)(nil),
			(*layers.Embedding)(nil),
			(*layers.Layer)(nil),
			(*layers.Module)(nil),
			(*layers.Modules)(nil),
			(*layers.SeqLayer)(nil),
			(*layers.SeqReducer)(nil),
			(*layers.Option)(nil),
			(*layers.Linear)(nil),
			(*layers.BatchNorm)(nil),
			(*layers.LayerNorm)(nil),
			(*layers.Dropout)(nil),
			(*layers.RNNConfig)(nil),
			(*layers.LSTM)(nil),
			(*layers.LSTMParams)(nil),
			(*layers.GRU)(nil),
			(*layers.GRUParams)(nil),
			(*layers.SequencePool)(nil),
			(*layers.SequenceConv)(nil),
			(*layers.Sequential)(nil),
			(*layers.PositionEmbedding)(nil),
			(*layers.TiedOutput)(nil),
			(*layers.TransformerEncoderLayer)(nil),
			(*layers.TransformerDecoderLayer)(nil),
			(*layers.TransformerDecoderCache)(nil),
			(*layers.TransformerConfig)(nil),
			(*layers.FeedForward)(nil),
			(*layers.Activation)(nil),
		},
	})
}

// The calls of the report, one by one: each returns an error (or a value
// carrying one), none panics.
func TestReportedPanicsAreErrors(t *testing.T) {
	tape := graph.NewTape()
	rng := tensor.NewRNG(1)
	lstm, err := layers.NewLSTM("lstm", layers.RNNConfig{In: 2, Units: 3}, rng)
	require.NoError(t, err)
	lin, err := layers.NewLinear("fc", 2, 3, rng)
	require.NoError(t, err)
	v := tape.Const(tensor.Zeros(tensor.Float32, 3, 2))
	require.NotPanics(t, func() {
		_, err := layers.NewLinear("fc", 2, 3, nil)
		require.ErrorContains(t, err, "nil *rand.Rand")
		require.ErrorContains(t, tape.Param(nil).Err(), "nil parameter")
		require.ErrorContains(t, tape.ConstSeq(nil).Err(), "nil ragged batch")
		require.ErrorContains(t, lstm.Final(graph.Seq{}).Err(), "nil values")
		require.Empty(t, graph.NewSeq(v, nil).Lengths())
		require.Nil(t, (&tensor.Ragged{Values: tensor.Zeros(tensor.Float32, 3, 2)}).Lengths())
		require.ErrorContains(t, layers.Activation(nil).Forward(v).Err(), "nil Activation")
		require.ErrorContains(t, lin.Forward(nil).Err(), "nil input")
	})
}
