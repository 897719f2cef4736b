package infer

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/plumbml/plumb/ops"
)

// Explain writes the plan before and after the passes: each op with its
// input and output shapes and its share of the plan's FLOPs (a multiply-add
// counts two; an element-wise op one per output element), what each pass
// changed, where each recurrent op's input projection runs, which steps
// fall back to Forward (and so allocate), and the
// arena's size against the intermediates' total. It is what
// `plumb infer --explain` prints.
func (p *Plan) Explain(w io.Writer) error {
	if !p.compiled() {
		return errors.New("infer: Explain of a plan Compile did not make")
	}
	if w == nil {
		return errors.New("infer: Explain to a nil writer")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "inputs %v -> outputs %v\n\n", p.Inputs(), p.Outputs())
	fmt.Fprintf(&b, "before the passes: %d ops\n", len(p.before.nodes))
	explainNodes(&b, p.before, nil)
	fmt.Fprintf(&b, "\npasses:\n")
	if len(p.passes) == 0 {
		fmt.Fprintf(&b, "  none changed the graph\n")
	}
	for _, s := range p.passes {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	fmt.Fprintf(&b, "\nafter the passes: %d ops\n", len(p.after.nodes))
	explainNodes(&b, p.after, p.steps)
	if notes := recurrentProjections(p.after); len(notes) > 0 {
		fmt.Fprintf(&b, "\nrecurrent input projections (already over the whole sequence; no pass needed):\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	fb := p.Fallbacks()
	if len(fb) == 0 {
		fmt.Fprintf(&b, "\nevery step runs into the arena (ForwardInto)\n")
	} else {
		fmt.Fprintf(&b, "\nsteps that run Forward and copy (not allocation-free): %s\n", strings.Join(fb, ", "))
	}
	fmt.Fprintf(&b, "arena: %d float32 + %d float64 elements for %d elements of intermediates\n",
		p.mem.f32, p.mem.f64, p.mem.peak)
	_, err := io.WriteString(w, b.String())
	return err
}

// Fallbacks returns the names of the plan's ops that have no ForwardInto
// and run by Forward with a copy, once each, in order.
func (p *Plan) Fallbacks() []string {
	if !p.compiled() {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for _, s := range p.steps {
		if !s.view && s.into == nil && !seen[s.op.Name()] {
			seen[s.op.Name()] = true
			names = append(names, s.op.Name())
		}
	}
	return names
}

// explainNodes writes one line per node of g; steps, when given, marks
// views and fallbacks.
func explainNodes(w io.Writer, g *Graph, steps []step) {
	total := int64(0)
	fl := make([]int64, len(g.nodes))
	for i, n := range g.nodes {
		fl[i] = g.flops(n)
		total += fl[i]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, n := range g.nodes {
		ins := make([]string, len(n.in))
		for j, r := range n.in {
			v := g.values[r]
			ins[j] = fmt.Sprint(v.shape)
			if v.kind == kindConst {
				ins[j] = "w" + ins[j]
			}
		}
		note := ""
		if steps != nil && i < len(steps) {
			switch {
			case steps[i].view:
				note = "view"
			case steps[i].into == nil:
				note = "Forward+copy"
			}
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(fl[i]) / float64(total)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t-> %v\t%5.1f%%\t%s\n", i, n.op.Name(), strings.Join(ins, " "), g.values[n.out].shape, share, note)
	}
	tw.Flush()
	fmt.Fprintf(w, "  total %.3g FLOPs a call\n", float64(total))
}

// flops estimates a node's floating-point operations from its shapes.
func (g *Graph) flops(n node) int64 {
	out := int64(g.values[n.out].shape.Size())
	op := n.op
	if e, ok := op.(*epilogueOp); ok {
		op = e.base.(ops.Op)
		out *= 1 + int64(b2i(e.residual)) + int64(b2i(e.act != ""))
		return out + g.flops(node{op: op, in: n.in[:e.nBase], out: n.out}) - int64(g.values[n.out].shape.Size())
	}
	if f, ok := op.(interface{ flops() int64 }); ok { // the plan's own fused ops
		return f.flops()
	}
	shape := func(i int) []int { return g.values[n.in[i]].shape }
	switch op.Name() {
	case "conv2d":
		w := shape(1) // [O, C/groups, KH, KW]: each output sums C/groups·KH·KW products
		return 2 * out * int64(w[1]*w[2]*w[3])
	case "linear":
		return 2 * out * int64(shape(1)[0])
	case "matmul":
		a := shape(0)
		k := a[len(a)-1]
		if at, ok := op.(ops.Attributed); ok {
			if m, ok := at.Attrs().(ops.MatMulAttrs); ok && m.TransposeA {
				k = a[len(a)-2]
			}
		}
		return 2 * out * int64(k)
	case "sequence_conv", "sequence_conv_pool_max": // x [total, D], filter [context·D, out]
		return 2 * int64(shape(0)[0]) * int64(shapeSize(shape(1)))
	case "reshape":
		return 0
	case "embedding":
		return out
	}
	// Recurrent and fused products (lstm, gru, linear_concat, ...): two
	// FLOPs per row of the first input and element of each constant
	// matrix, plus one an output element.
	f := out
	for _, r := range n.in[1:] {
		if v := g.values[r]; v.kind == kindConst && len(v.shape) == 2 {
			f += 2 * int64(shape(0)[0]) * int64(v.shape.Size())
		}
	}
	return f
}

func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}
