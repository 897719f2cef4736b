package bert

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/gradcheck"
	"github.com/plumbml/plumb/tensor"
)

func tinyConfig() Config {
	return Config{VocabSize: 50, HiddenSize: 16, NumHiddenLayers: 2, NumAttentionHeads: 2, IntermediateSize: 24,
		HiddenAct: "gelu", MaxPositionEmbeddings: 20, TypeVocabSize: 2, LayerNormEps: 1e-12, InitializerRange: 0.02}
}

// A sequence's outputs in a padded batch equal its outputs alone: the
// attention mask keeps the padding out of every real position.
func TestRaggedBatchMatchesSingles(t *testing.T) {
	m, err := LoadPretrained("testdata/tiny", nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{9, 3, 1, 6}
	ids, types := make([][]int, len(lengths)), make([][]int, len(lengths))
	for i, n := range lengths {
		for j := range n {
			ids[i] = append(ids[i], 1+rng.IntN(m.Config.VocabSize-1))
			types[i] = append(types[i], j*2/n)
		}
	}
	b, err := NewBatch(ids, types)
	require.NoError(t, err)
	tape := graph.NewEvalTape()
	h, p := m.Forward(tape, b)
	hb, err := h.Host()
	require.NoError(t, err)
	pb, err := p.Host()
	require.NoError(t, err)
	d := m.Config.HiddenSize
	for i, n := range lengths {
		one, err := NewBatch(ids[i:i+1], types[i:i+1])
		require.NoError(t, err)
		h1, p1 := m.Forward(tape, one)
		h1t, err := h1.Host()
		require.NoError(t, err)
		p1t, err := p1.Host()
		require.NoError(t, err)
		for j := range n * d {
			require.InDelta(t, h1t.At(j), hb.At(i*9*d+j), 1e-6, "sequence %d element %d", i, j)
		}
		for j := range d {
			require.InDelta(t, p1t.At(j), pb.At(i*d+j), 1e-6, "sequence %d pooled %d", i, j)
		}
	}
}

// New draws weights as transformers' _init_weights (normal, std
// initializer_range; biases 0, LayerNorm weights 1), names every
// parameter as BertModel does, and a training step sends a gradient to
// every parameter.
func TestNewAndTrainingStep(t *testing.T) {
	cfg := tinyConfig()
	cfg.HiddenDropoutProb, cfg.AttentionDropoutProb = 0.1, 0.1
	m, err := New(cfg, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	require.Len(t, m.Params(), 5+16*cfg.NumHiddenLayers+2)
	require.NotNil(t, m.Param("encoder.layer.1.attention.self.query.weight"))
	require.NotNil(t, m.Param("pooler.dense.bias"))
	require.Nil(t, m.Param("encoder.layer.2.output.dense.weight"))

	w := m.Param("embeddings.word_embeddings.weight").Value.Float32s()
	var sum, sq float64
	for _, v := range w {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	mean := sum / float64(len(w))
	std := math.Sqrt(sq/float64(len(w)) - mean*mean)
	require.InDelta(t, 0.02, std, 0.002)
	require.InDelta(t, 0, mean, 0.002)
	require.Equal(t, float32(1), m.Param("encoder.layer.0.output.LayerNorm.weight").Value.Float32s()[3])
	require.Equal(t, float32(0), m.Param("encoder.layer.0.intermediate.dense.bias").Value.Float32s()[5])
	require.Equal(t, tensor.Shape{16, 24}, m.Param("encoder.layer.0.intermediate.dense.weight").Value.Shape())

	b, err := NewBatch([][]int{{1, 2, 3, 4}, {5, 6}}, [][]int{{0, 0, 1, 1}, {0, 1}})
	require.NoError(t, err)
	tape := graph.NewTape()
	h, p := m.Forward(tape, b)
	loss := graph.Add(graph.Mean(graph.Square(h)), graph.Mean(graph.Square(p)))
	require.NoError(t, tape.Backward(loss))
	requireAllGrads(t, m.Params())

	// Dropout makes two training passes differ; an eval tape has none.
	h1, _ := m.Forward(graph.NewTape(), b)
	h2, _ := m.Forward(graph.NewTape(), b)
	e1, _ := m.Forward(graph.NewEvalTape(), b)
	e2, _ := m.Forward(graph.NewEvalTape(), b)
	require.NotEqual(t, hostOf(t, h1), hostOf(t, h2))
	require.Equal(t, hostOf(t, e1), hostOf(t, e2))
}

func hostOf(t *testing.T, v *graph.Value) []float32 {
	t.Helper()
	x, err := v.Host()
	require.NoError(t, err)
	return x.Float32s()
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"zero hidden", func(c *Config) { c.HiddenSize = 0 }, "hidden_size=0"},
		{"heads", func(c *Config) { c.NumAttentionHeads = 3 }, "not a multiple"},
		{"act", func(c *Config) { c.HiddenAct = "swishy" }, "hidden_act"},
		{"relative", func(c *Config) { c.PositionEmbeddingType = "relative_key" }, "position_embedding_type"},
		{"eps", func(c *Config) { c.LayerNormEps = 0 }, "layer_norm_eps"},
		{"dropout", func(c *Config) { c.HiddenDropoutProb = 1 }, "hidden_dropout_prob"},
		{"huge", func(c *Config) { c.VocabSize = 1 << 30 }, "parameters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig()
			c.edit(&cfg)
			require.ErrorContains(t, cfg.Validate(), c.want)
			_, err := New(cfg, rand.New(rand.NewPCG(1, 1)))
			require.ErrorContains(t, err, c.want)
		})
	}
	require.NoError(t, BaseConfig().Validate())
	_, err := New(tinyConfig(), nil)
	require.ErrorContains(t, err, "random source")
}

// copyTiny copies the committed checkpoint into a temporary directory with
// config.json's text edited by edit.
func copyTiny(t *testing.T, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("testdata/tiny", f))
		require.NoError(t, err)
		if f == "config.json" {
			b = []byte(edit(string(b)))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	return dir
}

func TestLoadPretrainedErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"more layers than the file", func(s string) string {
			return strings.Replace(s, `"num_hidden_layers": 2`, `"num_hidden_layers": 3`, 1)
		}, []string{`"encoder.layer.2.attention.self.query.weight" is missing`}},
		{"fewer layers than the file", func(s string) string {
			return strings.Replace(s, `"num_hidden_layers": 2`, `"num_hidden_layers": 1`, 1)
		}, []string{`"encoder.layer.1.output.dense.weight" in the file belongs to no parameter`}},
		{"other width", func(s string) string {
			return strings.Replace(s, `"intermediate_size": 64`, `"intermediate_size": 65`, 1)
		}, []string{`"encoder.layer.0.intermediate.dense.weight" is float32[64 32], want float32[65 32]`, `intermediate.dense.bias" is float32[64], want float32[65]`}},
		{"bad json", func(s string) string { return s[:20] }, []string{"config"}},
		{"bad config", func(s string) string {
			return strings.Replace(s, `"hidden_act": "gelu"`, `"hidden_act": "tanh"`, 1)
		}, []string{"hidden_act"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadPretrained(copyTiny(t, c.edit), nil)
			require.Error(t, err)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := LoadPretrained(t.TempDir(), nil)
	require.ErrorContains(t, err, "config.json")

	dir := copyTiny(t, func(s string) string { return s })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Repeat(" ", maxConfigBytes+1)), 0o644))
	_, err = LoadPretrained(dir, nil)
	require.ErrorContains(t, err, "over 1048576 bytes")
}

func TestBatchErrors(t *testing.T) {
	m, err := New(tinyConfig(), rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	ok, err := NewBatch([][]int{{1, 2}, {3}}, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 1, 1, 0}, ok.AttentionMask.Int64s())
	require.Equal(t, []int64{1, 2, 3, 0}, ok.IDs.Int64s())

	_, err = NewBatch(nil, nil)
	require.Error(t, err)
	_, err = NewBatch([][]int{{}, {}}, nil)
	require.ErrorContains(t, err, "empty")
	_, err = NewBatch([][]int{{1, 2}}, [][]int{{0}})
	require.ErrorContains(t, err, "2 ids and 1 types")
	_, err = NewBatch([][]int{{1, 2}}, [][]int{{0, 0}, {1}})
	require.ErrorContains(t, err, "2 sequences of types for 1")

	long := make([]int, 21)
	for _, c := range []struct {
		b    Batch
		want string
	}{
		{Batch{}, "without IDs"},
		{Batch{IDs: tensor.MustFromSlice([]int64{1, 2}, 2)}, "want [B, T]"},
		{Batch{IDs: tensor.MustFromSlice([]float32{1, 2}, 1, 2)}, "want int32 or int64"},
		{Batch{IDs: tensor.MustFromSlice([]int64{1, 50}, 1, 2)}, "IDs[1] = 50 outside [0, 50)"},
		{Batch{IDs: tensor.MustFromSlice([]int64{1, 2}, 1, 2), TokenTypes: tensor.MustFromSlice([]int64{0, 2}, 1, 2)}, "TokenTypes[1] = 2"},
		{Batch{IDs: tensor.MustFromSlice([]int64{1, 2}, 1, 2), AttentionMask: tensor.MustFromSlice([]int32{1}, 1, 1)}, "want the same shape"},
		{func() Batch { b, _ := NewBatch([][]int{long}, nil); return b }(), "21 positions"},
	} {
		h, p := m.Forward(graph.NewEvalTape(), c.b)
		require.ErrorContains(t, h.Err(), c.want)
		require.ErrorContains(t, p.Err(), c.want)
	}
	h, _ := (*Model)(nil).Forward(graph.NewEvalTape(), ok)
	require.ErrorContains(t, h.Err(), "not made by New")
}

// A task model's file names the encoder's tensors "bert.<name>"; they load
// the same.
func TestLoadPretrainedBertPrefix(t *testing.T) {
	want, err := LoadPretrained("testdata/tiny", nil)
	require.NoError(t, err)
	file, _, err := checkpoint.Read("testdata/tiny/model.safetensors")
	require.NoError(t, err)
	var ps []*graph.Param
	for name, x := range file {
		ps = append(ps, graph.NewParam("bert."+name, x))
	}
	dir := copyTiny(t, func(s string) string { return s })
	require.NoError(t, checkpoint.Save(filepath.Join(dir, "model.safetensors"), ps, nil))
	got, err := LoadPretrained(dir, nil)
	require.NoError(t, err)
	for i, p := range want.Params() {
		require.Equal(t, p.Value.Float32s(), got.Params()[i].Value.Float32s(), p.Name)
	}

	ps = append(ps, graph.NewParam("cls.predictions.bias", tensor.Zeros(tensor.Float32, 3)))
	require.NoError(t, checkpoint.Save(filepath.Join(dir, "model.safetensors"), ps, nil))
	_, err = LoadPretrained(dir, nil)
	require.ErrorContains(t, err, `"cls.predictions.bias" in the file belongs to no parameter of BertModel`)
}

// A float64 central-difference check of the whole encoder (both outputs,
// every parameter: the embeddings, masked attention, GELU, LayerNorms,
// pooler) on a ragged batch, with the parameters cast to float64.
func TestGradientsFloat64(t *testing.T) {
	cfg := Config{VocabSize: 12, HiddenSize: 8, NumHiddenLayers: 1, NumAttentionHeads: 2, IntermediateSize: 10,
		HiddenAct: "gelu", MaxPositionEmbeddings: 6, TypeVocabSize: 2, LayerNormEps: 1e-12, InitializerRange: 0.5}
	m, err := New(cfg, rand.New(rand.NewPCG(7, 8)))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, p := range m.Params() {
		x, err := p.Value.Cast(tensor.Float64)
		require.NoError(t, err)
		for i := range x.Size() { // off the ones and zeros of the biases and norms
			x.SetAt(i, x.At(i)+0.3*rng.NormFloat64())
		}
		p.Value = x
	}
	b, err := NewBatch([][]int{{1, 5, 7, 2}, {3, 11}, {4}}, [][]int{{0, 0, 1, 1}, {0, 1}, {1}})
	require.NoError(t, err)
	params := m.Params()
	in := make([]*tensor.Tensor, len(params))
	wrt := make([]int, len(params))
	for i, p := range params {
		in[i], wrt[i] = p.Value, i
	}
	both := func(tape *graph.Tape) *graph.Value {
		h, p := m.Forward(tape, b)
		return graph.Concat(0, graph.Reshape(h, -1), graph.Reshape(p, -1))
	}
	fwd := func([]*tensor.Tensor) (*tensor.Tensor, error) { return both(graph.NewTape()).Tensor() }
	bwd := func(_ []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
		graph.ZeroGrads(params)
		tape := graph.NewTape()
		if err := tape.BackwardWith(both(tape), gout); err != nil {
			return nil, err
		}
		grads := make([]*tensor.Tensor, len(params))
		for i, p := range params {
			grads[i] = p.Grad
			if p.SparseGrad != nil {
				g := tensor.Zeros(tensor.Float64, p.Value.Shape()...)
				w := p.Value.Dim(1)
				for k, r := range p.SparseGrad.Rows {
					for j := range w {
						g.SetAt(r*w+j, p.SparseGrad.Values.At(k*w+j))
					}
				}
				grads[i] = g
			}
		}
		return grads, nil
	}
	require.NoError(t, gradcheck.Check(fwd, bwd, in, wrt, gradcheck.Default))
}
