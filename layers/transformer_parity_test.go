package layers

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// TestTransformerParityWithPyTorch runs PyTorch's nn.MultiheadAttention,
// nn.TransformerEncoderLayer (post-norm ReLU, pre-norm GELU) and
// nn.TransformerDecoderLayer (post- and pre-norm) goldens
// (bench/transformer_parity.py, torch 2.15.0, float64, weights copied into
// Plumb's layouts) on padded batches with key padding masks and the
// decoder's causal mask: the output and the inputs' gradients of
// sum(out·r), in float64 (within 1e-10) and with the weights and inputs
// cast to float32 (within 1e-5).
func TestTransformerParityWithPyTorch(t *testing.T) {
	cfgs := map[string]TransformerConfig{
		"encoder_post_relu": {DModel: 8, Heads: 2, FF: 12},
		"encoder_pre_gelu":  {DModel: 8, Heads: 2, FF: 12, PreNorm: true, Activation: "gelu"},
		"decoder_post":      {DModel: 8, Heads: 4, FF: 10},
		"decoder_pre":       {DModel: 8, Heads: 4, FF: 10, PreNorm: true},
	}
	for _, name := range []string{"mha", "encoder_post_relu", "encoder_pre_gelu", "decoder_post", "decoder_pre"} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				g, _, err := checkpoint.Read(filepath.Join("testdata/transformer", name+".safetensors"))
				require.NoError(t, err)
				cast := func(x *tensor.Tensor) *tensor.Tensor {
					c, err := x.Cast(dt)
					require.NoError(t, err)
					return c
				}
				rng := rand.New(rand.NewPCG(1, 1))
				var params []*graph.Param
				var run func(x, mem *graph.Value) *graph.Value
				lengths, err := g["key_lengths"].Ints()
				require.NoError(t, err)
				switch name {
				case "mha":
					m, err := NewMultiHeadAttention("mha", MultiHeadAttentionConfig{Heads: 2, KeyDim: 4, QueryDim: 8, ValueDim: 8, OutDim: 8}, rng, DType(dt))
					require.NoError(t, err)
					params = m.Params()
					run = func(x, mem *graph.Value) *graph.Value {
						return m.ForwardMasked(x, mem, mem, nil, ops.AttentionAttrs{KeyLengths: lengths}, Dropout{})
					}
				case "encoder_post_relu", "encoder_pre_gelu":
					l, err := NewTransformerEncoderLayer("enc", cfgs[name], rng, DType(dt))
					require.NoError(t, err)
					params = l.Params()
					run = func(x, _ *graph.Value) *graph.Value {
						return l.Forward(x, nil, ops.AttentionAttrs{KeyLengths: lengths})
					}
				default:
					l, err := NewTransformerDecoderLayer("dec", cfgs[name], rng, DType(dt))
					require.NoError(t, err)
					params = l.Params()
					memLengths, err := g["memory_lengths"].Ints()
					require.NoError(t, err)
					run = func(y, mem *graph.Value) *graph.Value {
						return l.Forward(y, mem, nil, ops.AttentionAttrs{KeyLengths: lengths}, ops.AttentionAttrs{KeyLengths: memLengths})
					}
				}
				for _, p := range params {
					w, ok := g[p.Name]
					require.True(t, ok, "golden lacks %s", p.Name)
					require.Equal(t, p.Value.Shape(), w.Shape(), p.Name)
					p.Value = cast(w)
				}
				tol := 1e-10
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				tape := graph.NewTape()
				x := tape.Var(cast(g["x"]))
				var mem *graph.Value
				if m, ok := g["memory"]; ok {
					mem = tape.Var(cast(m))
				}
				out := run(x, mem)
				requireClose(t, g["out"], out, tol, "out")
				require.NoError(t, tape.BackwardWith(out, cast(g["r"])))
				requireCloseT(t, g["grad_x"], x.Grad(), tol, "grad_x")
				if mem != nil {
					requireCloseT(t, g["grad_memory"], mem.Grad(), tol, "grad_memory")
				}
			})
		}
	}
}

func requireClose(t *testing.T, want *tensor.Tensor, got *graph.Value, tol float64, what string) {
	t.Helper()
	g, err := got.Tensor()
	require.NoError(t, err)
	requireCloseT(t, want, g, tol, what)
}

func requireCloseT(t *testing.T, want, got *tensor.Tensor, tol float64, what string) {
	t.Helper()
	require.NotNil(t, got, what)
	require.Equal(t, want.Shape(), got.Shape(), what)
	d := 0.0
	for i := range want.Size() {
		d = math.Max(d, math.Abs(want.At(i)-got.At(i)))
	}
	t.Logf("%s: max |diff| %.3g", what, d)
	require.Less(t, d, tol, "%s: max |diff| %.3g", what, d)
}

// LabelSmoothedCrossEntropy matches PyTorch's
// CrossEntropyLoss(label_smoothing=0.1): the loss and the logits' gradient.
func TestLabelSmoothingParityWithPyTorch(t *testing.T) {
	g, _, err := checkpoint.Read("testdata/transformer/label_smoothing.safetensors")
	require.NoError(t, err)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		x, err := g["x"].Cast(dt)
		require.NoError(t, err)
		tape := graph.NewTape()
		v := tape.Var(x)
		loss := LabelSmoothedCrossEntropy(v, g["labels"], 0.1)
		got, err := loss.Item()
		require.NoError(t, err)
		want, err := g["out"].Item()
		require.NoError(t, err)
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		require.InDelta(t, want, got, tol, dt.String())
		require.NoError(t, tape.Backward(loss))
		requireCloseT(t, g["grad_x"], v.Grad(), tol, "grad_x "+dt.String())
	}
}
