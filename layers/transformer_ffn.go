package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
)

// TransformerConfig shapes a Transformer encoder or decoder layer
// (Vaswani et al. 2017; PyTorch's nn.TransformerEncoderLayer and
// nn.TransformerDecoderLayer): DModel features, Heads attention heads of
// DModel/Heads each, a feed-forward block of FF units.
type TransformerConfig struct {
	DModel, Heads, FF int
	// Dropout is the rate on each sublayer's output before its residual
	// sum, inside the feed-forward block after the activation, and, unless
	// AttentionDropout is set, on the attention probabilities (PyTorch's
	// one dropout argument).
	Dropout float64
	// AttentionDropout, when > 0, is the rate on the attention
	// probabilities in place of Dropout.
	AttentionDropout float64
	// Activation of the feed-forward block: "relu" (or empty), "gelu"
	// (exact) or "gelu_tanh".
	Activation string
	// PreNorm normalises each sublayer's input, x + f(norm(x)) (PyTorch's
	// norm_first=True, Xiong et al. 2020); otherwise the sum is
	// normalised, norm(x + f(x)), as in the paper.
	PreNorm bool
	// Epsilon of the layer norms; 0 means 1e-5, PyTorch's layer_norm_eps.
	Epsilon float64
}

// check validates the sizes and returns the activation, epsilon and the
// two dropouts (residual, attention).
func (c TransformerConfig) check(what, name string, rng *rand.Rand) (func(*graph.Value) *graph.Value, float64, Dropout, Dropout, error) {
	fail := func(err error) (func(*graph.Value) *graph.Value, float64, Dropout, Dropout, error) {
		return nil, 0, Dropout{}, Dropout{}, fmt.Errorf("layers: %s %q: %w", what, name, err)
	}
	if c.DModel <= 0 || c.Heads <= 0 || c.FF <= 0 || c.DModel%c.Heads != 0 {
		return fail(fmt.Errorf("d_model=%d heads=%d ff=%d: want positive sizes, d_model a multiple of heads", c.DModel, c.Heads, c.FF))
	}
	var act func(*graph.Value) *graph.Value
	switch c.Activation {
	case "", "relu":
		act = graph.Relu
	case "gelu":
		act = graph.Gelu
	case "gelu_tanh":
		act = graph.GeluTanh
	default:
		return fail(fmt.Errorf("activation %q, want relu, gelu or gelu_tanh", c.Activation))
	}
	eps := c.Epsilon
	if eps == 0 {
		eps = 1e-5
	}
	if !(eps > 0) {
		return fail(fmt.Errorf("epsilon %v, want > 0", c.Epsilon))
	}
	drop, err := NewDropout(c.Dropout, rng)
	if err != nil {
		return fail(err)
	}
	attn := drop
	if c.AttentionDropout > 0 {
		if attn, err = NewDropout(c.AttentionDropout, rng); err != nil {
			return fail(err)
		}
	}
	return act, eps, drop, attn, nil
}

// sublayer is one residual block of a Transformer layer with its norm.
type sublayer struct {
	norm    *LayerNorm
	preNorm bool
	drop    Dropout
}

// apply returns x + dropout(f(norm(x))) (pre-norm) or norm(x + dropout(f(x))).
func (s sublayer) apply(x *graph.Value, f func(*graph.Value) *graph.Value) *graph.Value {
	if s.preNorm {
		return graph.Add(x, s.drop.Forward(f(s.norm.Forward(x))))
	}
	return s.norm.Forward(graph.Add(x, s.drop.Forward(f(x))))
}

// attend returns the function h ↦ m's attention from h over memory (over h
// itself when memory is nil), for sublayer.apply.
func (m *MultiHeadAttention) attend(memory, mask *graph.Value, a ops.AttentionAttrs, drop Dropout) func(*graph.Value) *graph.Value {
	return func(h *graph.Value) *graph.Value {
		kv := memory
		if kv == nil {
			kv = h
		}
		return m.ForwardMasked(h, kv, kv, mask, a, drop)
	}
}

// FeedForward is the Transformer's position-wise feed-forward block,
// Out(dropout(act(In(x)))) (Vaswani et al. 2017, eq. 2; PyTorch's
// linear2(dropout(activation(linear1(x))))).
type FeedForward struct {
	In, Out *Linear
	act     func(*graph.Value) *graph.Value
	drop    Dropout
}

func newFeedForward(name string, d, ff int, act func(*graph.Value) *graph.Value, drop Dropout, rng *rand.Rand, opts []Option) (*FeedForward, error) {
	in, err := NewLinear(name+"/linear1", d, ff, rng, opts...)
	if err != nil {
		return nil, err
	}
	out, err := NewLinear(name+"/linear2", ff, d, rng, opts...)
	if err != nil {
		return nil, err
	}
	return &FeedForward{In: in, Out: out, act: act, drop: drop}, nil
}

// Forward applies the block over the last axis of x.
func (f *FeedForward) Forward(x *graph.Value) *graph.Value {
	if f == nil || f.In == nil || f.Out == nil || f.act == nil {
		return x.Tape().Fail(fmt.Errorf("layers: feed-forward block not made by a Transformer layer's constructor"))
	}
	return f.Out.Forward(f.drop.Forward(f.act(f.In.Forward(x))))
}

// Params returns the two layers' kernels and biases.
func (f *FeedForward) Params() []*graph.Param {
	if f == nil {
		return nil
	}
	return Params(f.In, f.Out)
}
