package layers

import (
	"reflect"

	"github.com/plumbml/plumb/graph"
)

// The interface family of layers. Every layer owns parameters (a Module);
// what it maps decides which of the narrower interfaces it implements:
//
//	Layer       a value to a value: Linear, Conv2D, BatchNorm, Dropout, ...
//	SeqLayer    a ragged batch to a ragged batch with the same offsets:
//	            LSTM, GRU, ProjectedLSTM, SequenceConv
//	SeqReducer  a ragged batch to one row per sequence: SequencePool
//
// Layers whose inputs are more than one value (MultiHeadAttention,
// BahdanauAttention, AttentionDecoder), whose input is ids rather than a
// value (Embedding: Lookup, LookupSeq) or whose output is a loss or a
// decoding (CRF) are Modules with their own methods. A model lists its
// parameters with Params over its modules, whatever their kind.

// Module is anything that owns parameters: every layer, and every model
// built from layers.
type Module interface {
	// Params returns every parameter, trainable or not (non-trainable
	// state such as batch norm's running statistics is saved in
	// checkpoints too; optimizers skip it).
	Params() []*graph.Param
}

// SeqLayer maps a ragged batch to a ragged batch with the same offsets,
// one output row per input step.
type SeqLayer interface {
	Module
	Forward(x graph.Seq) graph.Seq
}

// SeqReducer maps a ragged batch to one row per sequence, [B, ...].
type SeqReducer interface {
	Module
	Forward(x graph.Seq) *graph.Value
}

// Modules is a list of modules, itself a Module: its parameters are its
// modules', in order.
type Modules []Module

// Params returns every module's parameters, in order; nil modules (a nil
// interface or a nil pointer) have none.
func (ms Modules) Params() []*graph.Param {
	var ps []*graph.Param
	for _, m := range ms {
		if m == nil {
			continue
		}
		if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
			continue
		}
		ps = append(ps, m.Params()...)
	}
	return ps
}

// Params returns the parameters of ms in order: how a model lists its
// layers' parameters, Params(m.Emb, m.LSTM, m.Out).
func Params(ms ...Module) []*graph.Param { return Modules(ms).Params() }

// List makes a slice of one kind of module, such as a model's []*Linear, a
// Module.
func List[M Module](ms []M) Modules {
	out := make(Modules, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
