package infer

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// absorbCopies removes the copies the next op can do without, each in
// the way that costs least:
//   - a transpose of a constant (an imported graph's transposed weights,
//     ONNX Gemm's transB) is computed once, at compile time, into a new
//     constant, which the weight passes after it then prepack;
//   - a transpose swapping the last two axes whose readers are all
//     matmuls becomes their transpose flag on that operand (flipped: a
//     transposed operand under a set flag reads the source untransposed),
//     as TF's Grappler and ONNX Runtime's transpose optimiser fold a
//     transpose into MatMul;
//   - a copy that keeps every element in its place (a transpose moving
//     only size-1 axes, a slice of a whole axis, a concat of one input, a
//     broadcast_to of the input's own shape) becomes a reshape, which the
//     memory plan makes a view of its source's slot (an alias in the
//     arena) when the source is an intermediate.
func absorbCopies(g *Graph) (int, error) {
	uses := g.uses()
	n := 0
	for i, nd := range g.nodes {
		if nd.out < 0 || len(nd.in) == 0 {
			continue
		}
		src, out := g.values[nd.in[0]], g.values[nd.out]
		name := nd.op.Name()
		switch {
		case name == "transpose" && src.kind == kindConst && !g.isOutput(nd.out):
			c, err := ops.Run(nd.op, src.c)
			if err != nil {
				return n, err
			}
			g.values[nd.out] = value{kind: kindConst, dt: c.DType(), shape: c.Shape().Clone(), c: c}
			g.nodes[i].out = -1
		case isCopy(nd, src.shape, out.shape):
			g.nodes[i] = node{op: ops.ReshapeOp(out.shape...), in: nd.in[:1], out: nd.out}
		case name == "transpose" && swapsLastTwo(nd.op) && !g.isOutput(nd.out) && g.allMatmuls(uses[nd.out]):
			for _, j := range uses[nd.out] {
				g.nodes[j] = flipOperands(g.nodes[j], nd.out, nd.in[0])
			}
			g.nodes[i].out = -1
		default:
			continue
		}
		n++
	}
	g.dropDead()
	return n, nil
}

// isCopy reports whether nd copies its input with every element in its
// place.
func isCopy(nd node, in, out tensor.Shape) bool {
	switch nd.op.Name() {
	case "slice", "broadcast_to":
		return len(nd.in) == 1 && in.Equal(out)
	case "concat":
		return len(nd.in) == 1
	case "transpose":
		perm := transposePerm(nd.op)
		if len(perm) != len(in) {
			return false
		}
		last := -1 // the non-unit axes must keep their order
		for _, p := range perm {
			if in[p] == 1 {
				continue
			}
			if p < last {
				return false
			}
			last = p
		}
		return true
	}
	return false
}

// transposePerm returns a transpose op's permutation, or nil.
func transposePerm(op ops.Op) []int {
	at, ok := op.(ops.Attributed)
	if !ok {
		return nil
	}
	a, ok := at.Attrs().(ops.TransposeAttrs)
	if !ok {
		return nil
	}
	return a.Perm
}

// swapsLastTwo reports whether a transpose swaps the last two axes and
// keeps the others.
func swapsLastTwo(op ops.Op) bool {
	perm := transposePerm(op)
	r := len(perm)
	if r < 2 || perm[r-1] != r-2 || perm[r-2] != r-1 {
		return false
	}
	for i, p := range perm[:r-2] {
		if p != i {
			return false
		}
	}
	return true
}

// allMatmuls reports whether every node of readers is a matmul with
// transpose attributes.
func (g *Graph) allMatmuls(readers []int) bool {
	for _, j := range readers {
		at, ok := g.nodes[j].op.(ops.Attributed)
		if !ok || g.nodes[j].op.Name() != "matmul" {
			return false
		}
		if _, ok := at.Attrs().(ops.MatMulAttrs); !ok {
			return false
		}
	}
	return len(readers) > 0
}

// flipOperands returns the matmul nd reading src in place of t, the
// transpose of src's last two axes, with the flag of each such operand
// flipped.
func flipOperands(nd node, t, src Ref) node {
	a := nd.op.(ops.Attributed).Attrs().(ops.MatMulAttrs)
	in := append([]Ref(nil), nd.in...)
	if in[0] == t {
		in[0], a.TransposeA = src, !a.TransposeA
	}
	if in[1] == t {
		in[1], a.TransposeB = src, !a.TransposeB
	}
	return node{op: ops.MatMulOp(a.TransposeA, a.TransposeB), in: in, out: nd.out}
}
