package export

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
)

// matmul (NumPy/ONNX matmul of stacks of matrices, with tf.linalg.matmul's
// transpose flags on the last two axes) as MatMul, a flagged operand
// transposed first; layer_norm over the last NormAxes axes as
// LayerNormalization (opset 17) from axis -NormAxes. (The transpose op
// itself does not give back its permutation, ops.Attributed, so it has no
// export.)
func init() {
	register("matmul", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.MatMulAttrs)
		x, y := c.vs[0], c.vs[1]
		rank := c.out.Rank()
		out := &val{}
		switch {
		case y.seq != nil:
			return nil, fmt.Errorf("operand b is the rows of a ragged batch; expected it constant or a dense batch")
		case x.seq != nil && (y.batch || a.TransposeA && c.in[0].Rank() == 2):
			return nil, fmt.Errorf("operand a is the rows of a ragged batch, multiplied in a way the padded rows cannot follow; expected the rows times a constant")
		case x.seq != nil:
			out.seq = x.seq
		case y.batch && (c.in[1].Rank() < 3 || c.in[0].Rank() != rank):
			return nil, fmt.Errorf("operand b, a batch of rank %d, is a matrix whose rows are the batch; expected the batch as a stack dimension of both operands", c.in[1].Rank())
		case x.batch && a.TransposeA && c.in[0].Rank() == 2:
			return nil, fmt.Errorf("operand a [batch, K] is transposed, moving the batch; expected the batch to stay dimension 0")
		case x.batch || y.batch:
			out.batch = true
		}
		for i, v := range c.vs {
			t := c.in[i]
			if !v.batch && v.seq == nil && (out.batch || out.seq != nil) && t.Rank() == rank && rank > 2 && t.Dim(0) != 1 {
				return nil, fmt.Errorf("operand %d, %v%v, spans dimension 0, the batch; expected size 1 there or a lower rank, since the exported batch size is symbolic", i, t.DType(), t.Shape())
			}
		}
		names := []string{x.name, y.name}
		for i, flag := range []bool{a.TransposeA, a.TransposeB} {
			if !flag {
				continue
			}
			r := c.in[i].Rank()
			if c.vs[i].seq != nil {
				r++
			}
			perm := make([]int64, r)
			for j := range perm {
				perm[j] = int64(j)
			}
			perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
			names[i] = e.apply("Transpose", []string{names[i]}, attrInts("perm", perm...))
		}
		out.name = e.apply("MatMul", names)
		return out, nil
	})
	register("layer_norm", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.LayerNormAttrs)
		v := c.vs[0]
		if v.batch && a.NormAxes >= c.in[0].Rank() || v.seq != nil && a.NormAxes >= c.in[0].Rank() {
			return nil, fmt.Errorf("normalises over %d axes of a rank-%d input, the batch among them; expected axes within a row", a.NormAxes, c.in[0].Rank())
		}
		for _, p := range c.vs[1:] {
			if !p.konst {
				return nil, fmt.Errorf("gamma or beta is computed from the inputs; expected constants")
			}
		}
		return &val{batch: v.batch, seq: v.seq, name: e.apply("LayerNormalization", []string{v.name, c.vs[1].name, c.vs[2].name},
			attrInt("axis", int64(-a.NormAxes)), attrFloat("epsilon", a.Epsilon))}, nil
	})
}
