package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
)

// TransformerDecoderLayer is one layer of the Transformer's decoder
// (Vaswani et al. 2017, section 3.1; PyTorch's nn.TransformerDecoderLayer
// with batch_first=True): causal self-attention over the target, attention
// over the encoder's output (the memory), then the feed-forward block,
// each in a residual block with a layer norm (post-norm, or pre-norm with
// TransformerConfig.PreNorm). Parameters are named name/self_attention,
// name/cross_attention, name/linear1, name/linear2 and name/norm1..3.
type TransformerDecoderLayer struct {
	SelfAttention, CrossAttention *MultiHeadAttention
	FF                            *FeedForward
	Norm1, Norm2, Norm3           *LayerNorm
	attnDrop, drop                Dropout
	preNorm                       bool
}

// NewTransformerDecoderLayer returns a layer shaped by cfg; rng draws the
// weights and, on a training tape, the dropout masks.
func NewTransformerDecoderLayer(name string, cfg TransformerConfig, rng *rand.Rand, opts ...Option) (*TransformerDecoderLayer, error) {
	act, eps, drop, attnDrop, err := cfg.check("transformer decoder layer", name, rng)
	if err != nil {
		return nil, err
	}
	l := &TransformerDecoderLayer{attnDrop: attnDrop, drop: drop, preNorm: cfg.PreNorm}
	d := cfg.DModel
	mha := MultiHeadAttentionConfig{Heads: cfg.Heads, KeyDim: d / cfg.Heads, QueryDim: d, ValueDim: d, OutDim: d}
	if l.SelfAttention, err = NewMultiHeadAttention(name+"/self_attention", mha, rng, opts...); err != nil {
		return nil, err
	}
	if l.CrossAttention, err = NewMultiHeadAttention(name+"/cross_attention", mha, rng, opts...); err != nil {
		return nil, err
	}
	if l.FF, err = newFeedForward(name, d, cfg.FF, act, drop, rng, opts); err != nil {
		return nil, err
	}
	for i, n := range []**LayerNorm{&l.Norm1, &l.Norm2, &l.Norm3} {
		if *n, err = NewLayerNorm(fmt.Sprintf("%s/norm%d", name, i+1), d, opts...); err != nil {
			return nil, err
		}
		(*n).Epsilon = eps
	}
	return l, nil
}

// Forward maps the target y [B, Tq, DModel] to [B, Tq, DModel], attending
// over memory [B, Tk, DModel]. The self-attention is causal and sees the
// keys self allows (its key lengths: each target's length); the
// cross-attention sees the memory keys cross allows (each source's
// length, or a memory mask [B, Tk] in memMask, which may be nil).
func (l *TransformerDecoderLayer) Forward(y, memory, memMask *graph.Value, self, cross ops.AttentionAttrs) *graph.Value {
	if l == nil || l.SelfAttention == nil || l.CrossAttention == nil || l.FF == nil || l.Norm1 == nil || l.Norm2 == nil || l.Norm3 == nil {
		return y.Tape().Fail(fmt.Errorf("layers: transformer decoder layer not made by NewTransformerDecoderLayer"))
	}
	if memory == nil {
		return y.Tape().Fail(fmt.Errorf("layers: transformer decoder layer: nil memory"))
	}
	self.Causal = true
	y = sublayer{l.Norm1, l.preNorm, l.drop}.apply(y, l.SelfAttention.attend(nil, nil, self, l.attnDrop))
	y = sublayer{l.Norm2, l.preNorm, l.drop}.apply(y, l.CrossAttention.attend(memory, memMask, cross, l.attnDrop))
	return sublayer{l.Norm3, l.preNorm, l.drop}.apply(y, l.FF.Forward)
}

// Params returns both attentions', the feed-forward block's and the
// norms' parameters.
func (l *TransformerDecoderLayer) Params() []*graph.Param {
	if l == nil {
		return nil
	}
	return Params(l.SelfAttention, l.CrossAttention, l.FF, l.Norm1, l.Norm2, l.Norm3)
}
