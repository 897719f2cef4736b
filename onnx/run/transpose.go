package run

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Transpose: perm, by default the axes reversed. Float tensors on
// ops.Transpose, others on tensor's Transpose.
func init() {
	register("Transpose", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead("perm"); err != nil {
			return nil, err
		}
		p, hasPerm, err := c.n.intsAttr("perm")
		if err != nil {
			return nil, err
		}
		permOf := func(r int) ([]int, error) {
			perm := make([]int, r)
			seen := make([]bool, r)
			for i := range perm {
				perm[i] = r - 1 - i
				if hasPerm {
					if len(p) != r {
						return nil, fmt.Errorf("perm %v has %d entries for rank %d; expected a permutation of 0..%d", p, len(p), r, r-1)
					}
					if p[i] < 0 || p[i] >= int64(r) || seen[p[i]] {
						return nil, fmt.Errorf("perm %v is not a permutation of 0..%d", p, r-1)
					}
					seen[p[i]] = true
					perm[i] = int(p[i])
				}
			}
			return perm, nil
		}
		c.out[0].shape = nil
		if s := c.in[0].shape; s != nil {
			perm, err := permOf(len(s))
			if err != nil {
				return nil, c.n.errorf("%v", err)
			}
			out := make([]int, len(s))
			for i, a := range perm {
				out[i] = s[a]
			}
			c.out[0].shape = out
			if c.floatIn(0) {
				c.lower = lowerOp(&permuteOp{perm: perm})
			}
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			perm, err := permOf(in[0].Rank())
			if err != nil {
				return nil, err
			}
			var y *tensor.Tensor
			if in[0].DType().IsFloat() {
				y, err = ops.Transpose(in[0], perm...)
			} else {
				y, err = in[0].Transpose(perm...)
			}
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}
