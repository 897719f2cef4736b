package run

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// ONNX IsNaN and IsInf (detect_positive, detect_negative, both 1 by
// default): float in, BOOL (int64 0/1) out.
func init() {
	register("IsNaN", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead(); err != nil {
			return nil, err
		}
		return floatPredicate(c, math.IsNaN)
	}})
	register("IsInf", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead("detect_positive", "detect_negative"); err != nil {
			return nil, err
		}
		pos, err := c.n.intAttr("detect_positive", 1)
		if err != nil {
			return nil, err
		}
		neg, err := c.n.intAttr("detect_negative", 1)
		if err != nil {
			return nil, err
		}
		return floatPredicate(c, func(v float64) bool {
			return pos != 0 && math.IsInf(v, 1) || neg != 0 && math.IsInf(v, -1)
		})
	}})
}

func floatPredicate(c *ctx, f func(float64) bool) (kernel, error) {
	if err := c.float(0); err != nil {
		return nil, err
	}
	c.out[0].elem = elemBool
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		y := newTensor(tensor.Int64, []int(x.Shape()))
		for i := range x.Size() {
			y.Int64s()[i] = b2i(f(x.At(i)))
		}
		return []*tensor.Tensor{y}, nil
	}, nil
}
