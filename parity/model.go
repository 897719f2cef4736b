package parity

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// model is a whole Plumb layer or model that a "model" case runs: its
// parameters, whose values the case loads by name, and its forward pass
// from the case's data inputs (the inputs that hold no parameter, in
// order; float ones are Vars, so their gradients can be checked).
type model struct {
	params  []*graph.Param
	forward func(data []*graph.Value, raw []*tensor.Tensor) *graph.Value
}

// models build, from a case's attrs and data inputs, the layer or model
// its name stands for. The parameters' initial values are overwritten by
// the case's, so the seed does not matter.
var models = map[string]func(c *Case, dt tensor.DType, data []*tensor.Tensor) (*model, error){
	// The book's MNIST CNN (bookCNN): the mean softmax cross-entropy of the logits
	// of images data[0] against labels data[1], on a training tape.
	"mnist_cnn": func(c *Case, dt tensor.DType, data []*tensor.Tensor) (*model, error) {
		if len(data) != 2 {
			return nil, fmt.Errorf("want data inputs images and labels, got %d", len(data))
		}
		net, err := bookCNN(tensor.NewRNG(uint64(c.Seed)), layers.DType(dt))
		if err != nil {
			return nil, err
		}
		return &model{params: net.Params(), forward: func(in []*graph.Value, raw []*tensor.Tensor) *graph.Value {
			return graph.SoftmaxCrossEntropy(net.Forward(in[0]), raw[1])
		}}, nil
	},
	// layers.MultiHeadAttention named "mha": query data[0], value
	// data[1] and, when given, key data[2].
	"multi_head_attention": func(c *Case, dt tensor.DType, data []*tensor.Tensor) (*model, error) {
		if len(data) != 2 && len(data) != 3 {
			return nil, fmt.Errorf("want data inputs query, value and optional key, got %d", len(data))
		}
		a := c.Attrs
		m, err := layers.NewMultiHeadAttention("mha", layers.MultiHeadAttentionConfig{Heads: a.Heads, KeyDim: a.KeyDim, QueryDim: data[0].Dim(-1), ValueDim: data[1].Dim(-1), OutDim: a.OutDim}, tensor.NewRNG(uint64(c.Seed)), layers.DType(dt))
		if err != nil {
			return nil, err
		}
		attrs := ops.AttentionAttrs{KeyLengths: a.KeyLengths, Causal: a.Causal, Scale: a.Scale}
		return &model{params: m.Params(), forward: func(in []*graph.Value, _ []*tensor.Tensor) *graph.Value {
			var key *graph.Value
			if len(in) == 3 {
				key = in[2]
			}
			return m.Forward(in[0], key, in[1], attrs)
		}}, nil
	},
}

// bookCNN is the book's MNIST CNN as parity/record/record.py records it
// and as models/mnist.NewCNN builds it: conv 5×5×20 + relu + max pool 2 →
// batch norm → conv 5×5×50 + relu + max pool 2 → fc 10, with the
// parameter names of the golden case. It is defined here, from layers,
// so that parity stays below the models; models/mnist's tests check that
// NewCNN has this case's parameters.
func bookCNN(rng *rand.Rand, opts ...layers.Option) (layers.Layer, error) {
	conv1, err := layers.NewConv2D("conv1", layers.Conv2DConfig{In: 1, Out: 20, KH: 5, KW: 5}, rng, opts...)
	if err != nil {
		return nil, err
	}
	bn, err := layers.NewBatchNorm("bn1", 20, opts...)
	if err != nil {
		return nil, err
	}
	conv2, err := layers.NewConv2D("conv2", layers.Conv2DConfig{In: 20, Out: 50, KH: 5, KW: 5}, rng, opts...)
	if err != nil {
		return nil, err
	}
	fc, err := layers.NewLinear("fc", 50*4*4, 10, rng, opts...)
	if err != nil {
		return nil, err
	}
	relu := layers.Activation(graph.Relu)
	pool := layers.MaxPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{2, 2}}}
	return layers.Sequential{conv1, relu, pool, bn, conv2, relu, pool, layers.Flatten{}, fc}, nil
}

// evaluateModel loads a model case's parameters into the model by name
// (every parameter must have one, and every named one must exist), runs
// the forward pass on a training tape and back-propagates the recorded
// upstream gradient. It pairs the output, the recorded inputs' gradients
// (a parameter's Grad, or a data input's) and the inputs updated in place
// (batch norm's moving statistics) with their goldens.
func evaluateModel(c *Case) ([]pair, error) {
	build, ok := models[c.Op]
	if !ok {
		return nil, fmt.Errorf("no model for %q in parity/model.go", c.Op)
	}
	dt, err := c.dtype()
	if err != nil {
		return nil, err
	}
	in, err := c.loadInputs()
	if err != nil {
		return nil, err
	}
	isParam := make([]bool, len(in))
	for name, i := range c.Params {
		if i < 0 || i >= len(in) {
			return nil, fmt.Errorf("parameter %s at input %d of %d", name, i, len(in))
		}
		isParam[i] = true
	}
	var data []*tensor.Tensor
	for i, t := range in {
		if !isParam[i] {
			data = append(data, t)
		}
	}
	m, err := build(c, dt, data)
	if err != nil {
		return nil, err
	}
	byInput := map[int]*graph.Param{}
	for _, p := range m.params {
		i, ok := c.Params[p.Name]
		if !ok {
			return nil, fmt.Errorf("the case has no value for parameter %s", p.Name)
		}
		if !in[i].Shape().Equal(p.Value.Shape()) || in[i].DType() != p.Value.DType() {
			return nil, fmt.Errorf("parameter %s is %v%v, the case's value %v%v", p.Name, p.Value.DType(), p.Value.Shape(), in[i].DType(), in[i].Shape())
		}
		p.Value, byInput[i] = in[i], p
	}
	if len(byInput) != len(c.Params) {
		return nil, fmt.Errorf("the case names parameters %v, the model has %d of them", paramNames(c), len(byInput))
	}

	tape := graph.NewTape()
	vals := make([]*graph.Value, 0, len(data))
	var dataIdx []int
	for i, t := range in {
		if isParam[i] {
			continue
		}
		dataIdx = append(dataIdx, i)
		if t.DType().IsFloat() {
			vals = append(vals, tape.Var(t))
		} else {
			vals = append(vals, tape.Const(t))
		}
	}
	out := m.forward(vals, data)
	gout, err := c.load("gout.npy")
	if err != nil {
		return nil, err
	}
	if err := tape.BackwardWith(out, gout); err != nil {
		return nil, err
	}
	got, _ := out.Tensor() // BackwardWith has failed for a failed value
	pairs, err := c.outputs(got, in)
	if err != nil {
		return nil, err
	}
	for _, i := range c.Grads {
		var g *tensor.Tensor
		if prm, ok := byInput[i]; ok {
			g = prm.Grad
		} else if k := slices.Index(dataIdx, i); k >= 0 {
			g = vals[k].Grad()
		}
		if g == nil {
			return nil, fmt.Errorf("backward gave no gradient for input %d", i)
		}
		p, err := c.golden(fmt.Sprintf("grad%d", i), g)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// paramNames returns the case's parameter names, sorted.
func paramNames(c *Case) []string {
	var names []string
	for n := range c.Params {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// evaluateDecode runs ops.ViterbiDecode on a decode case's emissions,
// transitions, start and stop and pairs the best paths' scores with the
// golden out.npy. The paths themselves must equal paths.npy (every
// sequence's tags, concatenated) exactly; a different path is an error
// that names the sequence.
func evaluateDecode(c *Case) ([]pair, error) {
	if c.Op != "viterbi_decode" || c.Inputs != 4 {
		return nil, fmt.Errorf("decode case %s: want op viterbi_decode with 4 inputs", c.ID())
	}
	in, err := c.loadInputs()
	if err != nil {
		return nil, err
	}
	paths, scores, err := ops.ViterbiDecode(in[0], in[1], in[2], in[3], c.Attrs.Offsets)
	if err != nil {
		return nil, err
	}
	want, err := c.load("paths.npy")
	if err != nil {
		return nil, err
	}
	wantTags, err := want.Ints()
	if err != nil {
		return nil, err
	}
	off := c.Attrs.Offsets
	if len(wantTags) != off[len(off)-1] {
		return nil, fmt.Errorf("paths.npy has %d tags for offsets %v", len(wantTags), off)
	}
	for q, path := range paths {
		if w := wantTags[off[q]:off[q+1]]; !slices.Equal(path, w) {
			return nil, fmt.Errorf("viterbi path of sequence %d: got %v, want %v", q, path, w)
		}
	}
	got := tensor.Zeros(in[0].DType(), len(scores)) // evaluate checks it against the case's dtype
	for q, s := range scores {
		got.SetAt(q, s)
	}
	p, err := c.golden("out", got)
	return []pair{p}, err
}
