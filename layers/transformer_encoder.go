package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
)

// TransformerEncoderLayer is one layer of the Transformer's encoder
// (Vaswani et al. 2017, section 3.1; PyTorch's nn.TransformerEncoderLayer
// with batch_first=True): self-attention, then the feed-forward block,
// each in a residual block with a layer norm, post-norm (the paper's,
// PyTorch's default) or pre-norm (TransformerConfig.PreNorm).
//
// The attention is a MultiHeadAttention with key_dim DModel/Heads (Keras'
// layout of the projections, named name/self_attention/...); the
// feed-forward block is name/linear1 and name/linear2, the norms name/norm1
// (before or after the attention) and name/norm2.
type TransformerEncoderLayer struct {
	SelfAttention *MultiHeadAttention
	FF            *FeedForward
	Norm1, Norm2  *LayerNorm
	attnDrop      Dropout
	preNorm       bool
	drop          Dropout
}

// NewTransformerEncoderLayer returns a layer shaped by cfg; rng draws the
// weights and, on a training tape, the dropout masks.
func NewTransformerEncoderLayer(name string, cfg TransformerConfig, rng *rand.Rand, opts ...Option) (*TransformerEncoderLayer, error) {
	act, eps, drop, attnDrop, err := cfg.check("transformer encoder layer", name, rng)
	if err != nil {
		return nil, err
	}
	l := &TransformerEncoderLayer{attnDrop: attnDrop, preNorm: cfg.PreNorm, drop: drop}
	d := cfg.DModel
	if l.SelfAttention, err = NewMultiHeadAttention(name+"/self_attention", MultiHeadAttentionConfig{
		Heads: cfg.Heads, KeyDim: d / cfg.Heads, QueryDim: d, ValueDim: d, OutDim: d}, rng, opts...); err != nil {
		return nil, err
	}
	if l.FF, err = newFeedForward(name, d, cfg.FF, act, drop, rng, opts); err != nil {
		return nil, err
	}
	if l.Norm1, err = NewLayerNorm(name+"/norm1", d, opts...); err != nil {
		return nil, err
	}
	if l.Norm2, err = NewLayerNorm(name+"/norm2", d, opts...); err != nil {
		return nil, err
	}
	l.Norm1.Epsilon, l.Norm2.Epsilon = eps, eps
	return l, nil
}

// Forward maps x [B, T, DModel] to [B, T, DModel]. Each position attends
// to the keys that a's key lengths (a ragged batch padded to T: see
// PadSeq) and the optional mask [B, T] allow; a.Causal makes it causal.
// Padded positions get outputs too; a caller reads only the real ones.
func (l *TransformerEncoderLayer) Forward(x, mask *graph.Value, a ops.AttentionAttrs) *graph.Value {
	if l == nil || l.SelfAttention == nil || l.FF == nil || l.Norm1 == nil || l.Norm2 == nil {
		return x.Tape().Fail(fmt.Errorf("layers: transformer encoder layer not made by NewTransformerEncoderLayer"))
	}
	x = sublayer{l.Norm1, l.preNorm, l.drop}.apply(x, l.SelfAttention.attend(nil, mask, a, l.attnDrop))
	return sublayer{l.Norm2, l.preNorm, l.drop}.apply(x, l.FF.Forward)
}

// Params returns the attention's, the feed-forward block's and the norms'
// parameters.
func (l *TransformerEncoderLayer) Params() []*graph.Param {
	if l == nil {
		return nil
	}
	return Params(l.SelfAttention, l.FF, l.Norm1, l.Norm2)
}
