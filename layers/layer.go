// Package layers holds the building blocks of models: Linear, Conv2D,
// pooling, normalisation, Dropout, Flatten and Sequential for images and
// vectors; Embedding, LSTM, GRU, MultiHeadAttention, Bahdanau attention, an
// attention decoder, SequencePool, SequenceConv and CRF for sequences.
// Sequence layers take and return ragged graph.Seq values: they are
// SeqLayers (or a SeqReducer) rather than Layers. Every layer is a Module,
// and Params lists the parameters of any mix of them (see module.go).
//
// A layer owns named parameters (*graph.Param) and maps a value on a tape
// to a value on the same tape. Whether it behaves as in training (dropout
// on, batch norm on batch statistics) is the tape's choice
// (graph.NewTape vs graph.NewEvalTape), so one model serves both.
// Initializers follow Keras' defaults (Glorot-uniform kernels, zero biases)
// unless a layer documents otherwise.
//
// Concurrency: a layer's Forward only reads its parameters on an eval tape,
// so one model serves inference from many goroutines at once, each with
// its own tape (graph.NewEvalTape); this is tested under -race for Linear,
// Conv2D, BatchNorm, LSTM and MultiHeadAttention. On a training tape
// BatchNorm also updates its moving statistics, and Backward and the
// optimizer write the parameters: training is one goroutine per model,
// and graph and optim refuse a second one with an error (see graph's
// package doc). Building a layer and changing its fields are not safe
// while another goroutine uses it.
package layers

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Layer maps an input value to an output value and owns parameters.
type Layer interface {
	Module
	Forward(x *graph.Value) *graph.Value
}

// Option configures a layer at construction.
type Option func(*config)

type config struct {
	dtype  tensor.DType
	noBias bool
}

func newConfig(opts []Option) config {
	c := config{dtype: tensor.Float32}
	for _, o := range opts {
		if o != nil { // a nil Option changes nothing
			o(&c)
		}
	}
	return c
}

// DType sets the parameters' dtype (Float32 by default).
func DType(dt tensor.DType) Option { return func(c *config) { c.dtype = dt } }

// NoBias leaves out a layer's bias.
func NoBias() Option { return func(c *config) { c.noBias = true } }

// Trainable returns the trainable parameters of ps, the ones an optimizer updates.
func Trainable(ps []*graph.Param) []*graph.Param {
	var out []*graph.Param
	for _, p := range ps {
		if p.Trainable {
			out = append(out, p)
		}
	}
	return out
}

// kernelBias is the weights of Linear and Conv2D: a kernel and an optional
// bias, named name/kernel and name/bias.
type kernelBias struct {
	W, B *graph.Param // B is nil with NoBias
}

func newKernelBias(name string, w *tensor.Tensor, outputs int, c config) kernelBias {
	k := kernelBias{W: graph.NewParam(name+"/kernel", w)}
	if !c.noBias {
		k.B = graph.NewParam(name+"/bias", tensor.Zeros(c.dtype, outputs))
	}
	return k
}

// values returns the kernel's and bias's leaves on t (the bias's is nil
// without a bias).
func (k kernelBias) values(t *graph.Tape) (w, b *graph.Value) {
	if k.B != nil {
		b = t.Param(k.B)
	}
	return t.Param(k.W), b
}

// Params returns the kernel and, if present, the bias.
func (k kernelBias) Params() []*graph.Param {
	if k.B == nil {
		return []*graph.Param{k.W}
	}
	return []*graph.Param{k.W, k.B}
}

// missing reports a layer built as a literal without some of its
// parameters (a zero value), which would otherwise fail deep in an op.
func missing(layer string, ps ...*graph.Param) error {
	for _, p := range ps {
		if p == nil || p.Value == nil {
			return fmt.Errorf("layers: %s without its parameters (build it with its New function)", layer)
		}
	}
	return nil
}

// failedOr returns v when it carries an error (a failed, zero or released
// value), else, for a nil v, a value carrying an error naming what.
func failedOr(v *graph.Value, what string) *graph.Value {
	if v != nil {
		return v
	}
	return (*graph.Tape)(nil).Fail(fmt.Errorf("layers: %s is nil", what))
}

// noTape is what Forward returns for an input that is on no tape: x
// itself when it is a failed or zero value (it carries its error), else a
// value carrying an error that names the layer.
func noTape(layer string, x *graph.Value) *graph.Value {
	if x != nil {
		return x
	}
	return (*graph.Tape)(nil).Fail(fmt.Errorf("layers: %s: nil input", layer))
}
