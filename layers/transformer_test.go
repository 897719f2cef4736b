package layers

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/gradcheck"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// checkModuleGrads runs a float64 central-difference check of f's output
// with respect to the trainable params and the input x (a Var on the
// tape). reset is called before every evaluation (to re-seed dropout, so
// that every evaluation drops the same units).
func checkModuleGrads(t *testing.T, params []*graph.Param, x *tensor.Tensor, f func(x *graph.Value) *graph.Value, reset func()) {
	t.Helper()
	params = Trainable(params)
	in := []*tensor.Tensor{x}
	wrt := []int{0}
	for i, p := range params {
		in = append(in, p.Value)
		wrt = append(wrt, i+1)
	}
	if reset == nil {
		reset = func() {}
	}
	fwd := func([]*tensor.Tensor) (*tensor.Tensor, error) {
		reset()
		return f(graph.NewTape().Var(x)).Tensor()
	}
	bwd := func(_ []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
		reset()
		graph.ZeroGrads(params)
		tape := graph.NewTape()
		xv := tape.Var(x)
		if err := tape.BackwardWith(f(xv), gout); err != nil {
			return nil, err
		}
		grads := []*tensor.Tensor{xv.Grad()}
		for _, p := range params {
			g := p.Grad
			if p.SparseGrad != nil { // a table looked up: scatter its rows
				g = tensor.Zeros(p.Value.DType(), p.Value.Shape()...)
				w := p.Value.Dim(1)
				for i, r := range p.SparseGrad.Rows {
					for j := range w {
						g.SetAt(r*w+j, g.At(r*w+j)+p.SparseGrad.Values.At(i*w+j))
					}
				}
			}
			if g == nil {
				g = tensor.Zeros(p.Value.DType(), p.Value.Shape()...)
			}
			grads = append(grads, g)
		}
		return grads, nil
	}
	require.NoError(t, gradcheck.Check(fwd, bwd, in, wrt, gradcheck.Default))
}

// perturb moves every parameter off its initial values (LayerNorm's ones
// and zeros, zero biases) so that the checks see every term.
func perturb(ps []*graph.Param) {
	for i, p := range ps {
		p.Value = randn(uint64(100+i), p.Value.Shape()...)
		if p.Value.Size() > 32 {
			for j := range p.Value.Size() {
				p.Value.SetAt(j, p.Value.At(j)*0.3)
			}
		}
	}
}

var f64 = DType(tensor.Float64)

func TestTransformerEncoderLayerGradients(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  TransformerConfig
	}{
		{"post-norm relu", TransformerConfig{DModel: 8, Heads: 2, FF: 12}},
		{"pre-norm gelu", TransformerConfig{DModel: 8, Heads: 2, FF: 12, PreNorm: true, Activation: "gelu"}},
		{"gelu tanh", TransformerConfig{DModel: 6, Heads: 3, FF: 5, Activation: "gelu_tanh", Epsilon: 1e-3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewTransformerEncoderLayer("enc", c.cfg, rand.New(rand.NewPCG(1, 2)), f64)
			require.NoError(t, err)
			perturb(l.Params())
			x := randn(3, 3, 5, c.cfg.DModel)
			mask := tensor.MustFromSlice([]float64{1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 3, 5)
			checkModuleGrads(t, l.Params(), x, func(x *graph.Value) *graph.Value {
				return l.Forward(x, x.Tape().Const(mask), ops.AttentionAttrs{KeyLengths: []int{5, 4, 2}})
			}, nil)
		})
	}
}

// With dropout the composed attention (probabilities materialised) is
// checked, re-seeding the masks for every evaluation.
func TestTransformerDropoutGradients(t *testing.T) {
	cfg := TransformerConfig{DModel: 4, Heads: 2, FF: 6, Dropout: 0.3, AttentionDropout: 0.4}
	src := rand.NewPCG(7, 7)
	rng := rand.New(src)
	l, err := NewTransformerEncoderLayer("enc", cfg, rng, f64)
	require.NoError(t, err)
	perturb(l.Params())
	x := randn(4, 2, 4, 4)
	checkModuleGrads(t, l.Params(), x, func(x *graph.Value) *graph.Value {
		return l.Forward(x, nil, ops.AttentionAttrs{KeyLengths: []int{4, 3}, Causal: true})
	}, func() { src.Seed(7, 7) })
}

func TestTransformerDecoderLayerGradients(t *testing.T) {
	for _, pre := range []bool{false, true} {
		l, err := NewTransformerDecoderLayer("dec", TransformerConfig{DModel: 6, Heads: 2, FF: 8, PreNorm: pre}, rand.New(rand.NewPCG(3, 4)), f64)
		require.NoError(t, err)
		perturb(l.Params())
		mem := randn(5, 2, 3, 6)
		checkModuleGrads(t, l.Params(), randn(6, 2, 4, 6), func(y *graph.Value) *graph.Value {
			return l.Forward(y, y.Tape().Const(mem), nil, ops.AttentionAttrs{KeyLengths: []int{4, 2}}, ops.AttentionAttrs{KeyLengths: []int{3, 1}})
		}, nil)
		// The memory's gradient too: the memory is the checked input.
		y := randn(8, 2, 4, 6)
		checkModuleGrads(t, l.Params(), mem, func(m *graph.Value) *graph.Value {
			return l.Forward(m.Tape().Const(y), m, nil, ops.AttentionAttrs{}, ops.AttentionAttrs{KeyLengths: []int{3, 2}})
		}, nil)
	}
}

// A decoder position's output depends on no later target position.
func TestTransformerDecoderIsCausal(t *testing.T) {
	l, err := NewTransformerDecoderLayer("dec", TransformerConfig{DModel: 4, Heads: 2, FF: 8}, rand.New(rand.NewPCG(3, 4)), f64)
	require.NoError(t, err)
	mem := randn(5, 1, 3, 4)
	y := randn(6, 1, 5, 4)
	y2 := y.Clone()
	for j := 3 * 4; j < 5*4; j++ { // change steps 3 and 4
		y2.SetAt(j, y2.At(j)+1)
	}
	tape := graph.NewEvalTape()
	a, err := l.Forward(tape.Const(y), tape.Const(mem), nil, ops.AttentionAttrs{}, ops.AttentionAttrs{}).Tensor()
	require.NoError(t, err)
	b, err := l.Forward(tape.Const(y2), tape.Const(mem), nil, ops.AttentionAttrs{}, ops.AttentionAttrs{}).Tensor()
	require.NoError(t, err)
	for j := range 5 * 4 {
		if j < 3*4 {
			require.InDelta(t, a.At(j), b.At(j), 1e-12, "step %d", j/4)
		} else {
			require.NotEqual(t, a.At(j), b.At(j))
		}
	}
}

// Over a ragged batch (padded, with key lengths) each sequence's outputs
// equal its outputs alone, and Unpad returns exactly those rows.
func TestTransformerEncoderRaggedBatch(t *testing.T) {
	l, err := NewTransformerEncoderLayer("enc", TransformerConfig{DModel: 8, Heads: 4, FF: 16, PreNorm: true}, rand.New(rand.NewPCG(5, 6)), f64)
	require.NoError(t, err)
	perturb(l.Params())
	lengths := []int{3, 6, 1}
	var rows []float64
	offsets := []int{0}
	for i, n := range lengths {
		rows = append(rows, randn(uint64(20+i), n*8).Float64s()...)
		offsets = append(offsets, offsets[i]+n)
	}
	tape := graph.NewEvalTape()
	seq := graph.NewSeq(tape.Const(tensor.MustFromSlice(rows, len(rows)/8, 8)), offsets)
	padded, lens := graph.PadSeq(seq)
	require.Equal(t, lengths, lens)
	out := Unpad(l.Forward(padded, nil, ops.AttentionAttrs{KeyLengths: lens}), lens)
	require.NoError(t, out.Err())
	require.Equal(t, offsets, out.Offsets)
	got, err := out.Values.Tensor()
	require.NoError(t, err)
	for i, n := range lengths {
		alone, err := l.Forward(tape.Const(tensor.MustFromSlice(rows[offsets[i]*8:offsets[i+1]*8], 1, n, 8)), nil, ops.AttentionAttrs{}).Tensor()
		require.NoError(t, err)
		for j := range n * 8 {
			require.InDelta(t, alone.At(j), got.At(offsets[i]*8+j), 1e-12, "sequence %d", i)
		}
	}
}

// The composed attention (taken when dropout applies) computes what the
// fused op does under every mask: key lengths, a key mask, causal, and a
// query with no allowed key (zeros). A rate of 1e-15 drops nothing in
// practice and scales by 1/(1-1e-15).
func TestScaledDotProductAttentionComposedEqualsFused(t *testing.T) {
	q, k, v := randn(1, 2, 2, 4, 3), randn(2, 2, 2, 5, 3), randn(3, 2, 2, 5, 2)
	mask := tensor.MustFromSlice([]float64{1, 0, 1, 1, 1, 0, 0, 0, 0, 0}, 2, 5)
	for _, a := range []ops.AttentionAttrs{{}, {KeyLengths: []int{3, 5}}, {Causal: true}, {Causal: true, KeyLengths: []int{2, 4}, Scale: 0.7}} {
		for _, withMask := range []bool{false, true} {
			tape := graph.NewTape()
			var m *graph.Value
			if withMask {
				m = tape.Const(mask)
			}
			fused, err := ScaledDotProductAttention(tape.Var(q), tape.Var(k), tape.Var(v), m, a, Dropout{}).Tensor()
			require.NoError(t, err)
			composed, err := ScaledDotProductAttention(tape.Var(q), tape.Var(k), tape.Var(v), m, a, Dropout{Rate: 1e-15, RNG: rand.New(rand.NewPCG(1, 1))}).Tensor()
			require.NoError(t, err)
			require.Equal(t, fused.Shape(), composed.Shape())
			for i := range fused.Size() {
				require.InDelta(t, fused.At(i), composed.At(i), 1e-12, "%+v mask %v element %d", a, withMask, i)
			}
			if withMask { // batch element 1 allows no key: zeros
				for i := 2 * 4 * 2; i < 4*4*2; i++ {
					require.Zero(t, composed.At(i))
				}
			}
		}
	}
	tape := graph.NewTape()
	bad := ScaledDotProductAttention(tape.Var(randn(1, 2, 3, 2)), tape.Var(randn(1, 2, 3, 2)), tape.Var(randn(1, 2, 3, 2)), nil, ops.AttentionAttrs{}, Dropout{Rate: 0.5, RNG: rand.New(rand.NewPCG(1, 1))})
	require.ErrorContains(t, bad.Err(), "want [B, H, Tq, d]")
}

func TestPositionEmbeddings(t *testing.T) {
	pe, err := SinusoidalPositions(50, 6, tensor.Float64)
	require.NoError(t, err)
	at := func(pos, j int) float64 { return pe.At(pos*6 + j) }
	require.Equal(t, []float64{0, 1, 0, 1, 0, 1}, pe.Float64s()[:6])
	require.InDelta(t, math.Sin(1), at(1, 0), 1e-15)
	require.InDelta(t, math.Cos(1), at(1, 1), 1e-15)
	require.InDelta(t, math.Sin(7/math.Pow(10000, 2.0/6)), at(7, 2), 1e-15)
	require.InDelta(t, math.Cos(49/math.Pow(10000, 4.0/6)), at(49, 5), 1e-15)
	_, err = SinusoidalPositions(0, 6, tensor.Float64)
	require.Error(t, err)
	_, err = SinusoidalPositions(3, 6, tensor.Int32)
	require.ErrorContains(t, err, "dtype")

	fixed, err := NewSinusoidalPositionEmbedding("pos", 10, 4, f64)
	require.NoError(t, err)
	require.False(t, fixed.Table.Trainable)
	x := randn(1, 2, 3, 4)
	got, err := fixed.Forward(graph.NewEvalTape().Const(x)).Tensor()
	require.NoError(t, err)
	want, _ := SinusoidalPositions(10, 4, tensor.Float64)
	for b := range 2 {
		for j := range 3 * 4 {
			require.InDelta(t, x.At(b*12+j)+want.At(j), got.At(b*12+j), 1e-15)
		}
	}

	learned, err := NewPositionEmbedding("pos", 6, 4, rand.New(rand.NewPCG(1, 1)), f64)
	require.NoError(t, err)
	checkModuleGrads(t, learned.Params(), randn(2, 2, 5, 4), learned.Forward, nil)
	bad := learned.Forward(graph.NewEvalTape().Const(randn(1, 1, 7, 4)))
	require.ErrorContains(t, bad.Err(), "T <= 6")
}

func TestTiedOutput(t *testing.T) {
	emb, err := NewEmbedding("emb", EmbeddingConfig{Vocab: 7, Dim: 4}, rand.New(rand.NewPCG(1, 1)), f64)
	require.NoError(t, err)
	out, err := NewTiedOutput("out", emb)
	require.NoError(t, err)
	require.Equal(t, []*graph.Param{out.Bias}, out.Params())
	out.Bias.Value = randn(3, 7)
	// The table's gradient sums the lookup's and the projection's.
	ids := tensor.MustFromSlice([]int64{1, 3, 3, 6, 0, 2}, 2, 3)
	checkModuleGrads(t, Params(emb, out), randn(4, 2, 3, 4), func(x *graph.Value) *graph.Value {
		h := graph.Add(x, emb.Lookup(x.Tape(), ids))
		return out.Forward(h)
	}, nil)
	x := randn(5, 2, 4)
	got, err := out.Forward(graph.NewEvalTape().Const(x)).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 7}, got.Shape())
	want := 0.0
	for j := range 4 {
		want += x.At(4+j) * emb.Table.Value.At(5*4+j)
	}
	require.InDelta(t, want+out.Bias.Value.At(5), got.At(7+5), 1e-12)
	_, err = NewTiedOutput("out", nil)
	require.Error(t, err)
}

func TestLabelSmoothedCrossEntropy(t *testing.T) {
	logits := randn(1, 3, 5)
	labels := tensor.MustFromSlice([]int64{4, 0, 2}, 3)
	for _, eps := range []float64{0, 0.1, 0.5} {
		got, err := LabelSmoothedCrossEntropy(graph.NewTape().Const(logits), labels, eps).Item()
		require.NoError(t, err)
		want := 0.0
		for i := range 3 {
			lse := 0.0
			for c := range 5 {
				lse += math.Exp(logits.At(i*5 + c))
			}
			lse = math.Log(lse)
			for c := range 5 {
				q := eps / 5
				if c == int(labels.At(i)) {
					q += 1 - eps
				}
				want += q * (lse - logits.At(i*5+c)) / 3
			}
		}
		require.InDelta(t, want, got, 1e-12, "eps %v", eps)
		gradcheck.CheckOp(t, func() ops.Op { return lsceOp{labels, eps} }, []*tensor.Tensor{logits}, 0)
	}
	bad := LabelSmoothedCrossEntropy(graph.NewTape().Const(logits), labels, 1)
	require.ErrorContains(t, bad.Err(), "eps 1 outside")
}

// lsceOp wraps LabelSmoothedCrossEntropy as an op for gradcheck.CheckOp.
type lsceOp struct {
	labels *tensor.Tensor
	eps    float64
}

func (lsceOp) Name() string { return "lsce" }

func (o lsceOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	return LabelSmoothedCrossEntropy(graph.NewTape().Const(in[0]), o.labels, o.eps).Tensor()
}

func (o lsceOp) Backward(in []*tensor.Tensor, _, gout *tensor.Tensor, _ []bool) ([]*tensor.Tensor, error) {
	tape := graph.NewTape()
	x := tape.Var(in[0])
	if err := tape.BackwardWith(LabelSmoothedCrossEntropy(x, o.labels, o.eps), gout); err != nil {
		return nil, err
	}
	return []*tensor.Tensor{x.Grad()}, nil
}

func TestTransformerConfigErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		cfg  TransformerConfig
		want string
	}{
		{TransformerConfig{DModel: 6, Heads: 4, FF: 8}, "multiple of heads"},
		{TransformerConfig{DModel: 8, Heads: 2}, "ff=0"},
		{TransformerConfig{DModel: 8, Heads: 2, FF: 4, Activation: "swish"}, `activation "swish"`},
		{TransformerConfig{DModel: 8, Heads: 2, FF: 4, Epsilon: -1}, "epsilon -1"},
		{TransformerConfig{DModel: 8, Heads: 2, FF: 4, Dropout: 1}, "dropout rate 1"},
		{TransformerConfig{DModel: 8, Heads: 2, FF: 4, AttentionDropout: 2}, "dropout rate 2"},
	} {
		_, err := NewTransformerEncoderLayer("enc", c.cfg, rng)
		require.ErrorContains(t, err, c.want)
		_, err = NewTransformerDecoderLayer("dec", c.cfg, rng)
		require.ErrorContains(t, err, c.want)
	}
	_, err := NewTransformerEncoderLayer("enc", TransformerConfig{DModel: 8, Heads: 2, FF: 4, Dropout: 0.1}, nil)
	require.ErrorContains(t, err, "random source")
}

// A failed or nil key reaches the result of the composed attention.
func TestScaledDotProductAttentionFailedKeys(t *testing.T) {
	tape := graph.NewTape()
	drop := Dropout{Rate: 0.5, RNG: rand.New(rand.NewPCG(1, 1))}
	q := tape.Var(randn(1, 1, 1, 2, 2))
	bad := tape.Fail(errors.New("no keys"))
	require.ErrorContains(t, ScaledDotProductAttention(q, bad, q, nil, ops.AttentionAttrs{}, drop).Err(), "no keys")
	require.Error(t, ScaledDotProductAttention(q, nil, q, nil, ops.AttentionAttrs{}, drop).Err())
}
