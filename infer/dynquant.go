package infer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// DynamicQuant turns on dynamic int8 quantization in Compile (Options.
// Dynamic), as PyTorch's torch.ao.quantization.quantize_dynamic and ONNX
// Runtime's quantize_dynamic do it: each float32 linear layer with a
// constant weight (linear, and linear_concat, the fc over a concatenation
// that feeds the stacked LSTM's lstm_projected, so its input projection;
// also the text CNN's sequence_conv_pool_max without trainable padding,
// a product of context windows, see dynSeqConvPoolOp) gets symmetric per-output-channel int8 weights, quantized once at
// compile time (qgemm.QuantizeWeights, 7-bit), and quantizes its input
// per call, per tensor, from that call's range (ONNX
// DynamicQuantizeLinear: asymmetric uint8), then multiplies in int8 and
// dequantizes into float32 with the bias (qgemm.LinearDynamic). No
// calibration is needed. Everything else stays float32.
type DynamicQuant struct {
	// Skip lists layers kept in float32, by name: the weight's parameter
	// name without its last element ("fc1" for "fc1/weight") where Names
	// gives it, otherwise linear_0, linear_concat_0, ... counting each op
	// in the order the graph runs them once Compile's folds have run (a
	// linear layer folded into the next one is gone, as is one whose
	// output no output reads). DynamicLayers lists them.
	Skip []string
	// Names maps a weight tensor of the traced model to its parameter's
	// name.
	Names map[*tensor.Tensor]string
}

// DynamicLayers returns the names of the layers Compile with
// Options{Dynamic: ...} quantizes when none is skipped, in graph order:
// the names DynamicQuant.Skip takes.
func DynamicLayers(g *Graph, names map[*tensor.Tensor]string) ([]string, error) {
	if g == nil || len(g.outputs) == 0 {
		return nil, errors.New("infer: DynamicLayers of an empty graph")
	}
	h := g.clone()
	for _, p := range passes(Options{}) {
		if p.name == "linear weights prepacked" {
			break
		}
		if _, err := p.run(h); err != nil {
			return nil, fmt.Errorf("infer: DynamicLayers: pass %s: %w", p.name, err)
		}
	}
	var out []string
	for _, d := range dynamicCandidates(h, names) {
		out = append(out, d.name)
	}
	return out, nil
}

// dynCandidate is a node the dynamic pass can quantize, with its layer
// name.
type dynCandidate struct {
	node int
	name string
}

// dynamicCandidates lists g's float32 linear and linear_concat nodes with
// a constant 2-D weight (and a constant bias where there is one), named as
// DynamicQuant.Skip names them.
func dynamicCandidates(g *Graph, names map[*tensor.Tensor]string) []dynCandidate {
	var out []dynCandidate
	count := map[string]int{}
	live := g.pruned().nodes
	for i, nd := range g.nodes {
		if len(live) == 0 || live[0].out != nd.out {
			continue
		}
		live = live[1:]
		op := nd.op.Name()
		wi := 1
		switch op {
		case "linear":
		case "linear_concat":
			wi = 2
		case "sequence_conv_pool_max":
			if len(nd.in) != 2 { // trainable padding: kept float32
				continue
			}
		default:
			continue
		}
		if len(nd.in) <= wi || g.values[nd.out].dt != tensor.Float32 {
			continue
		}
		w := g.values[nd.in[wi]]
		if w.kind != kindConst || len(w.shape) != 2 {
			continue
		}
		if len(nd.in) > wi+1 && g.values[nd.in[wi+1]].kind != kindConst {
			continue
		}
		name := fmt.Sprintf("%s_%d", op, count[op])
		count[op]++
		if s := names[w.c]; s != "" {
			name = s
			if j := strings.LastIndex(s, "/"); j > 0 {
				name = s[:j]
			}
		}
		out = append(out, dynCandidate{node: i, name: name})
	}
	return out
}

// dynamicPass returns the pass that replaces each candidate not in
// d.Skip by a dynLinearOp; a skip entry naming no layer is an error.
func dynamicPass(d *DynamicQuant) pass {
	return pass{"linear layers dynamically quantized to int8", func(g *Graph) (int, error) {
		cands := dynamicCandidates(g, d.Names)
		for _, s := range d.Skip {
			if !slices.ContainsFunc(cands, func(c dynCandidate) bool { return c.name == s }) {
				all := make([]string, len(cands))
				for i, c := range cands {
					all[i] = c.name
				}
				return 0, fmt.Errorf("skip list names %q, which is no quantizable layer (have %s)", s, strings.Join(all, ", "))
			}
		}
		n := 0
		for _, c := range cands {
			if slices.Contains(d.Skip, c.name) {
				continue
			}
			nd := g.nodes[c.node]
			var op ops.Op
			nAct, err := 1, error(nil)
			if nd.op.Name() == "sequence_conv_pool_max" {
				op, err = newDynSeqConvPool(c.name, g, nd)
			} else {
				op, nAct, err = newDynLinear(c.name, nd.op.Name(), g, nd)
			}
			if err != nil {
				return n, fmt.Errorf("layer %s: %w", c.name, err)
			}
			g.nodes[c.node] = node{op: op, in: slices.Clone(nd.in[:nAct]), out: nd.out}
			n++
		}
		return n, nil
	}}
}

// dynLinearOp is a linear layer (or linear_concat, over the concatenation
// of its two inputs) with int8 weights, its input quantized per call: out
// = DynamicQuantizeLinear(x)·W_int8, dequantized with both scales, plus
// the float32 bias (qgemm.LinearDynamic's computation; for
// linear_concat the two inputs share one range and are quantized side by
// side, the concatenation ONNX Runtime's dynamic MatMul would see). Its inputs are the activations
// only; the weights and bias live in the op. It is safe for concurrent
// calls: each takes its buffers from a pool.
type dynLinearOp struct {
	layer string
	from  string // linear or linear_concat
	name  string // from + "_dynamic_int8"
	ka    int    // the first input's width (all of k for linear)
	k, n  int    // the product's depth and width
	rows  int    // the traced graph's rows, for Explain's FLOPs
	pb    *qgemm.PackedB
	scale []float32
	bias  []float32
	bufs  sync.Pool // *dynScratch
}

// dynScratch is one call's buffers: the quantized input (for
// linear_concat, of both inputs side by side) and the epilogue.
type dynScratch struct {
	q  []uint8
	ep qgemm.Epilogue
}

// newDynLinear quantizes nd's weight and returns the op and how many
// activation inputs it takes (1 for linear, 2 for linear_concat).
func newDynLinear(layer, from string, g *Graph, nd node) (*dynLinearOp, int, error) {
	nAct := 1
	if from == "linear_concat" {
		nAct = 2
	}
	wt := g.values[nd.in[nAct]].c
	k, n := wt.Dim(0), wt.Dim(1)
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(wt.At(i))
	}
	q, scale, err := qgemm.QuantizeWeights(k, n, w, n)
	if err != nil {
		return nil, 0, err
	}
	pb, err := qgemm.PackB(k, n, q, n)
	if err != nil {
		return nil, 0, err
	}
	x := g.values[nd.in[0]].shape
	o := &dynLinearOp{layer: layer, from: from, name: from + "_dynamic_int8", ka: x[len(x)-1], k: k, n: n, rows: x[:len(x)-1].Size(), pb: pb, scale: scale}
	if len(nd.in) > nAct+1 {
		b := g.values[nd.in[nAct+1]].c
		o.bias = make([]float32, n)
		for j := range o.bias {
			o.bias[j] = float32(b.At(j))
		}
	}
	return o, nAct, nil
}

func (o *dynLinearOp) Name() string { return o.name }

// flops counts two a multiply-add of the product and one an output for
// the dequantize and bias.
func (o *dynLinearOp) flops() int64 {
	return int64(o.rows) * int64(o.n) * (2*int64(o.k) + 1)
}

// check validates the activations and returns the rows m.
func (o *dynLinearOp) check(in []*tensor.Tensor) (int, error) {
	name := o.Name()
	nAct := 1
	if o.from == "linear_concat" {
		nAct = 2
	}
	if len(in) != nAct {
		return 0, ops.Errorf(name, in, "layer %s: want %d float32 input(s)", o.layer, nAct)
	}
	for _, t := range in {
		if t == nil || t.DType() != tensor.Float32 || t.Rank() < 1 || t.Storage() != nil {
			return 0, ops.Errorf(name, in, "layer %s: want host float32 inputs [..., k]", o.layer)
		}
	}
	a := in[0]
	if a.Dim(-1) != o.ka {
		return 0, ops.Errorf(name, in, "layer %s: want a [..., %d]", o.layer, o.ka)
	}
	if nAct == 2 {
		b := in[1]
		if b.Rank() != a.Rank() || !b.Shape()[:b.Rank()-1].Equal(a.Shape()[:a.Rank()-1]) || b.Dim(-1) != o.k-o.ka {
			return 0, ops.Errorf(name, in, "layer %s: want b [%v, %d] beside a", o.layer, a.Shape()[:a.Rank()-1], o.k-o.ka)
		}
	}
	return a.Shape()[:a.Rank()-1].Size(), nil
}

func (o *dynLinearOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if _, err := o.check(in); err != nil {
		return nil, err
	}
	out := tensor.Empty(tensor.Float32, append(in[0].Shape()[:in[0].Rank()-1].Clone(), o.n)...)
	return out, o.ForwardInto(out, in)
}

// ForwardInto is the op's Into: it quantizes the input (for linear_concat,
// both inputs as one tensor, the concatenation ONNX Runtime's dynamic
// MatMul would see) and runs the int8 product into out.
func (o *dynLinearOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	m, err := o.check(in)
	if err != nil {
		return err
	}
	if out == nil || out.DType() != tensor.Float32 || out.Storage() != nil || out.Rank() != in[0].Rank() ||
		!out.Shape()[:out.Rank()-1].Equal(in[0].Shape()[:in[0].Rank()-1]) || out.Dim(-1) != o.n {
		return ops.Errorf(o.Name(), in, "layer %s: want out float32 [%v, %d]", o.layer, in[0].Shape()[:in[0].Rank()-1], o.n)
	}
	s, _ := o.bufs.Get().(*dynScratch)
	if s == nil {
		s = &dynScratch{}
	}
	defer o.bufs.Put(s)
	if cap(s.q) < m*o.k {
		s.q = make([]uint8, m*o.k)
	}
	q := s.q[:m*o.k]
	var b []float32
	if len(in) == 2 {
		b = in[1].Float32s()
	}
	sx, zp, err := dynQuantizeRows(m, o.ka, o.k-o.ka, in[0].Float32s(), b, q)
	if err == nil {
		s.ep = qgemm.Epilogue{ScaleA: sx, ScaleB: o.scale, Bias: o.bias}
		err = qgemm.GemmFloat32(m, q, o.k, zp, o.pb, &s.ep, out.Float32s(), o.n)
	}
	if err != nil {
		return fmt.Errorf("infer: %s (layer %s): %w", o.Name(), o.layer, err)
	}
	return nil
}

func (o *dynLinearOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, fmt.Errorf("infer: %s (layer %s) is inference-only", o.Name(), o.layer)
}
