package layers

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A config's initialiser draws the table (the padding row still starts
// at zero); one returning the wrong shape or dtype, or failing, is an
// error naming the embedding.
func TestEmbeddingConfigInit(t *testing.T) {
	l, err := NewEmbedding("n", EmbeddingConfig{Vocab: 400, Dim: 8, Padded: true, PaddingIdx: 0, Init: initializer.Normal(2)}, tensor.NewRNG(1))
	require.NoError(t, err)
	sum, sq, big := 0.0, 0.0, 0
	for i, v := range l.Table.Value.Float32s() {
		if i < 8 {
			require.Zero(t, v, "the padding row starts at zero")
			continue
		}
		sum, sq = sum+float64(v), sq+float64(v)*float64(v)
		if v > 0.05 || v < -0.05 {
			big++
		}
	}
	n := float64(399 * 8)
	require.InDelta(t, 0, sum/n, 0.15)
	require.InDelta(t, 2, math.Sqrt(sq/n-(sum/n)*(sum/n)), 0.1, "N(0, 2²)")
	require.Greater(t, big, 3000, "not Keras' uniform ±0.05")

	g, err := NewEmbedding("g", EmbeddingConfig{Vocab: 2, Dim: 5, Init: initializer.GlorotUniform}, tensor.NewRNG(1), DType(tensor.Float64))
	require.NoError(t, err)
	limit := math.Sqrt(6.0 / 7)
	for _, v := range g.Table.Value.Float64s() {
		require.True(t, math.Abs(v) <= limit, "%v outside Glorot's ±%v", v, limit)
	}

	wrong := func(shape ...int) func(*rand.Rand, tensor.DType, ...int) (*tensor.Tensor, error) {
		return func(*rand.Rand, tensor.DType, ...int) (*tensor.Tensor, error) {
			return tensor.New(tensor.Float32, shape...)
		}
	}
	for _, c := range []struct {
		init func(*rand.Rand, tensor.DType, ...int) (*tensor.Tensor, error)
		want string
	}{
		{wrong(3, 2), `layers: embedding "bad": initialiser returned float32[3 2], want float32[3 4]`},
		{func(*rand.Rand, tensor.DType, ...int) (*tensor.Tensor, error) { return nil, nil }, "initialiser returned nil"},
		{func(*rand.Rand, tensor.DType, ...int) (*tensor.Tensor, error) { return nil, errors.New("no entropy") }, "no entropy"},
	} {
		_, err := NewEmbedding("bad", EmbeddingConfig{Vocab: 3, Dim: 4, Init: c.init}, tensor.NewRNG(1))
		require.ErrorContains(t, err, c.want)
	}
	_, err = NewEmbedding("bad", EmbeddingConfig{Vocab: 3, Dim: 4, Init: wrong(3, 4)}, tensor.NewRNG(1), DType(tensor.Float64))
	require.ErrorContains(t, err, "initialiser returned float32[3 4], want float64[3 4]")
}

func TestEmbeddingInitAndPadding(t *testing.T) {
	l, err := NewEmbedding("emb", EmbeddingConfig{Vocab: 50, Dim: 4, Padded: true, PaddingIdx: 3}, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Equal(t, "emb/embeddings", l.Table.Name)
	for i, v := range l.Table.Value.Float32s() {
		if i/4 == 3 {
			require.Zero(t, v, "the padding row starts at zero")
			continue
		}
		require.True(t, v >= -0.05 && v < 0.05, "element %d = %v outside Keras' uniform(-0.05, 0.05)", i, v)
	}
	tape := graph.NewTape()
	ids := tensor.MustFromSlice([]int64{3, 7, 7}, 3)
	y := l.Lookup(tape, ids)
	require.Equal(t, tensor.Shape{3, 4}, y.Shape())
	require.NoError(t, tape.Backward(graph.Sum(y)))
	rows, err := ops.EmbeddingRows(ids, l.PaddingIdx)
	require.NoError(t, err)
	require.Equal(t, []int{7}, rows)
	require.Equal(t, rows, l.Table.SparseGrad.Rows, "the table's gradient is sparse: only the looked-up rows")
	grad, err := l.Table.DenseGrad()
	require.NoError(t, err)
	for i, v := range grad.Float32s() {
		want := float32(0)
		if i/4 == 7 {
			want = 2
		}
		require.Equal(t, want, v, "element %d", i)
	}

	none, err := NewEmbedding("e", EmbeddingConfig{Vocab: 3, Dim: 2}, tensor.NewRNG(1), DType(tensor.Float64))
	require.NoError(t, err)
	require.Equal(t, ops.NoPadding, none.PaddingIdx)
	require.Len(t, none.Params(), 1)
	_, err = none.Lookup(graph.NewTape(), tensor.MustFromSlice([]int32{3}, 1)).Tensor()
	require.ErrorContains(t, err, "embedding: inputs float64[3 2], int32[1]: id 3 at position 0 out of range [0, 3)")
	require.ErrorContains(t, none.Lookup(nil, ids).Err(), "layers: embedding: nil tape")
	require.ErrorContains(t, (&Embedding{}).Lookup(graph.NewTape(), ids).Err(), "embedding without its parameters")
	require.ErrorContains(t, none.LookupSeq(graph.NewTape(), nil).Err(), "layers: embedding: nil ragged ids")
	r, err := tensor.NewRagged(tensor.MustFromSlice([]int64{0, 2, 1}, 3), []int{0, 1, 1, 3})
	require.NoError(t, err)
	s := none.LookupSeq(graph.NewTape(), r)
	require.Equal(t, []int{0, 1, 1, 3}, s.Offsets)
	require.Equal(t, tensor.Shape{3, 2}, s.Values.Shape())
	for _, pad := range []int{3, -1} {
		_, err = NewEmbedding("bad", EmbeddingConfig{Vocab: 3, Dim: 2, Padded: true, PaddingIdx: pad}, tensor.NewRNG(1))
		require.ErrorContains(t, err, `layers: embedding "bad": vocab=3 dim=2 padded=true padding index `+fmt.Sprint(pad))
	}
}

func TestSequenceLayers(t *testing.T) {
	off := []int{0, 2, 2, 3, 7}
	x := randn(1, 7, 3)
	conv, err := NewSequenceConv("sc", SequenceConvConfig{In: 3, Out: 5, ContextStart: -1, ContextLength: 3, TrainablePadding: true}, tensor.NewRNG(2), DType(tensor.Float64))
	require.NoError(t, err)
	require.Len(t, conv.Params(), 3)
	require.Equal(t, tensor.Shape{2, 3}, conv.Padding.Value.Shape())
	tape := graph.NewTape()
	s := graph.NewSeq(tape.Const(x), off)
	y := conv.Forward(s)
	require.Equal(t, off, y.Offsets)
	pooled := SequencePool{Kind: ops.SequencePoolMax, Pad: -1}.Forward(y)
	require.NoError(t, tape.Backward(graph.Sum(pooled)))
	for _, p := range conv.Params() {
		require.NotNil(t, p.Grad, p.Name)
	}

	want, err := ops.SequenceConv(x, conv.Filter.Value, conv.Padding.Value, off, -1, 3)
	require.NoError(t, err)
	got, err := y.Values.Tensor()
	require.NoError(t, err)
	require.Equal(t, want.Float64s(), got.Float64s(), "zero bias")
	p, err := pooled.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{-1, -1, -1, -1, -1}, p.Float64s()[5:10], "the empty sequence pools to Pad")

	plain, err := NewSequenceConv("p", SequenceConvConfig{In: 3, Out: 2, ContextLength: 1}, tensor.NewRNG(2), NoBias())
	require.NoError(t, err)
	require.Len(t, plain.Params(), 1)
	_, err = NewSequenceConv("bad", SequenceConvConfig{In: 3, Out: 2, ContextLength: 0}, tensor.NewRNG(2))
	require.ErrorContains(t, err, `layers: sequence conv "bad"`)
	_, err = SequencePool{Kind: "mode"}.Forward(s).Tensor()
	require.ErrorContains(t, err, `sequence_pool: inputs float64[7 3]: unknown pool type "mode"`)
	require.Nil(t, SequencePool{}.Params())
}

// TestSequenceConvForwardMaxPool checks the pooled convolution against the
// literal order (convolve, add the bias, act on every step, max-pool) in
// value and in every gradient, with and without bias and act, for
// sequences of 1 to 6 steps with trainable padding.
func TestSequenceConvForwardMaxPool(t *testing.T) {
	off := []int{0, 1, 4, 6, 12}
	for _, c := range []struct {
		name string
		bias bool
		act  func(*graph.Value) *graph.Value
	}{
		{"tanh", true, graph.Tanh},
		{"sigmoid", true, graph.Sigmoid},
		{"relu", true, graph.Relu},
		{"no act", true, nil},
		{"no bias", false, graph.Tanh},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []Option{DType(tensor.Float64)}
			if !c.bias {
				opts = append(opts, NoBias())
			}
			conv, err := NewSequenceConv("sc", SequenceConvConfig{In: 3, Out: 5, ContextStart: -2, ContextLength: 4, TrainablePadding: true}, tensor.NewRNG(3), opts...)
			require.NoError(t, err)
			if conv.Bias != nil {
				conv.Bias.Value = randn(4, 5)
			}
			conv.Padding.Value = randn(5, conv.Padding.Value.Shape()...)
			run := func(pooled func(*graph.Tape, graph.Seq) *graph.Value) ([]float64, [][]float64) {
				tape := graph.NewTape()
				x := tape.Var(randn(6, 12, 3))
				y := pooled(tape, graph.NewSeq(x, off))
				require.NoError(t, tape.Backward(graph.Sum(graph.Mul(y, tape.Const(randn(7, 4, 5))))))
				v, err := y.Tensor()
				require.NoError(t, err)
				grads := [][]float64{x.Grad().Float64s()}
				for _, p := range conv.Params() {
					grads = append(grads, p.Grad.Float64s())
					p.Grad = nil
				}
				return v.Float64s(), grads
			}
			want, wantGrads := run(func(_ *graph.Tape, s graph.Seq) *graph.Value {
				y := conv.Forward(s)
				if c.act != nil {
					y = y.With(c.act(y.Values))
				}
				return SequencePool{Kind: ops.SequencePoolMax}.Forward(y)
			})
			got, gotGrads := run(func(_ *graph.Tape, s graph.Seq) *graph.Value { return conv.ForwardMaxPool(s, c.act) })
			require.InDeltaSlice(t, want, got, 1e-12)
			require.Len(t, gotGrads, len(wantGrads))
			for i := range wantGrads {
				require.InDeltaSlicef(t, wantGrads[i], gotGrads[i], 1e-12, "gradient %d", i)
			}
		})
	}
}
