package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX ScatterND (opset 11; the reduction attribute from 16): a copy of
// data with the slices at indices' coordinate tuples replaced by updates
// (reduction "none") or added to (reduction "add"), on ops.ScatterND.
// Reductions mul (16), min and max (18) are rejected at compile time.
func init() {
	register("ScatterND", opDef{compile: compileScatterND})
}

func compileScatterND(c *ctx) (kernel, error) {
	if err := c.arity(3, 3, 1); err != nil {
		return nil, err
	}
	allowed := []string{}
	if c.n.opset >= 16 {
		allowed = append(allowed, "reduction")
	}
	if err := c.n.allow(allowed...); err != nil {
		return nil, err
	}
	red, err := c.n.stringAttr("reduction", "none")
	if err != nil {
		return nil, err
	}
	var r ops.ScatterReduction
	switch red {
	case "none":
		r = ops.ScatterNone
	case "add":
		r = ops.ScatterAdd
	default:
		return nil, c.n.errorf("reduction %q is not supported; expected \"none\" or \"add\"", red)
	}
	if err := c.floatData(0, 1); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 2); err != nil {
		return nil, err
	}
	data, idx, upd := c.in[0].shape, c.in[1].shape, c.in[2].shape
	if data != nil && idx != nil && len(idx) > 0 && idx[len(idx)-1] >= 0 {
		k := idx[len(idx)-1]
		if k < 1 || k > len(data) {
			return nil, c.n.errorf("indices %s has last dim %d for data %s; expected 1 to data's rank %d", shapeStr(idx), k, shapeStr(data), len(data))
		}
		want := append(append([]int{}, idx[:len(idx)-1]...), data[k:]...)
		if upd != nil && !compatible(upd, want) {
			return nil, c.n.errorf("updates %s for data %s and indices %s; expected %s (indices' dims but the last, then data's from dim %d)", shapeStr(upd), shapeStr(data), shapeStr(idx), shapeStr(want), k)
		}
	}
	c.out[0] = info{elem: c.in[0].elem, shape: data}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.ScatterND(in[0], in[1], in[2], r)
		return []*tensor.Tensor{y}, err
	}, nil
}
