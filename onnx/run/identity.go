package run

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Identity, Dropout at inference (the identity: its ratio is ignored,
// as ONNX specifies when training_mode is false; the mask output is not
// supported) and Cast (to FLOAT, DOUBLE, INT32, INT64 or BOOL; float to
// int truncates toward zero, as ONNX Runtime does).
func init() {
	register("Identity", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead(); err != nil {
			return nil, err
		}
		c.out[0] = c.in[0]
		c.out[0].konst = nil
		c.lower = lowerIdentity
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{in[0]}, nil }, nil
	}})
	register("Dropout", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 3, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("seed", "ratio"); err != nil {
			return nil, err
		}
		if c.has(2) {
			v, ok := c.in[2].ints()
			if !ok || len(v) != 1 || v[0] != 0 {
				return nil, c.n.errorf("input 2 (training_mode) is not a constant false; expected inference (training_mode absent or false)")
			}
		}
		c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
		if len(c.n.Outputs) < 2 || c.n.Outputs[1] == "" {
			c.lower = lowerIdentity
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{in[0]}, nil }, nil
	}})
	register("Cast", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("to", "saturate"); err != nil {
			return nil, err
		}
		to, err := c.n.intAttr("to", 0)
		if err != nil {
			return nil, err
		}
		elem := elemFromInt(to)
		dt, ok := runtimeDType(elem)
		if !ok {
			return nil, c.n.errorf("to = %v is not supported; expected FLOAT, DOUBLE, INT32, INT64 or BOOL", elem)
		}
		toBool := elem == elemBool
		c.out[0] = info{elem: elem, shape: c.in[0].shape}
		if isIntElem(elem) && isIntElem(c.in[0].elem) {
			c.out[0].part = c.in[0].part
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			x := in[0]
			y := newTensor(dt, []int(x.Shape()))
			switch {
			case toBool:
				for i := range x.Size() {
					y.Int64s()[i] = b2i(x.At(i) != 0)
				}
			case !x.DType().IsFloat() && !dt.IsFloat():
				for i := range x.Size() {
					setInt(y, i, intAt(x, i))
				}
			case !dt.IsFloat():
				for i := range x.Size() {
					v := math.Trunc(x.At(i))
					if math.IsNaN(v) {
						v = 0
					}
					setInt(y, i, int64(max(min(v, math.MaxInt64), math.MinInt64)))
				}
			default:
				for i := range x.Size() {
					if x.DType().IsFloat() {
						y.SetAt(i, x.At(i))
					} else {
						y.SetAt(i, float64(intAt(x, i)))
					}
				}
			}
			return []*tensor.Tensor{y}, nil
		}, nil
	}})
}
