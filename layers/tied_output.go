package layers

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// TiedOutput is an output projection that shares its weights with an
// embedding table (weight tying: Press & Wolf 2017; Vaswani et al. 2017,
// section 3.4): logits = x·Eᵀ + b for the table E [vocab, D] of Emb and a
// bias b [vocab] of its own. The table is Emb's parameter, so Params
// lists only the bias: a model lists Emb once, and the table's gradient
// is the sum of the lookup's and the projection's.
type TiedOutput struct {
	Emb  *Embedding
	Bias *graph.Param
}

// NewTiedOutput returns the projection tied to emb, its bias named
// name/bias and zero.
func NewTiedOutput(name string, emb *Embedding) (*TiedOutput, error) {
	if emb == nil || emb.Table == nil || emb.Table.Value == nil || emb.Table.Value.Rank() != 2 {
		return nil, fmt.Errorf("layers: tied output %q: want an embedding with a [vocab, D] table", name)
	}
	v := emb.Table.Value
	return &TiedOutput{Emb: emb, Bias: graph.NewParam(name+"/bias", tensor.Zeros(v.DType(), v.Dim(0)))}, nil
}

// Forward returns x·Eᵀ + b for x [..., D]: [..., vocab].
func (o *TiedOutput) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("tied output", x)
	}
	if o == nil || o.Emb == nil || o.Emb.Table == nil || o.Bias == nil {
		return t.Fail(fmt.Errorf("layers: tied output without its table or bias (build it with NewTiedOutput)"))
	}
	return graph.Add(graph.MatMul(x, t.Param(o.Emb.Table), false, true), t.Param(o.Bias))
}

// Params returns the bias (the table belongs to the embedding).
func (o *TiedOutput) Params() []*graph.Param {
	if o == nil {
		return nil
	}
	return []*graph.Param{o.Bias}
}
