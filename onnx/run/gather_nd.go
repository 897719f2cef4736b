package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX GatherND (opset 11; batch_dims from 12): the slices of data at the
// coordinate tuples of indices' last axis, after batch_dims leading dims
// data and indices share; the output is indices.shape[:-1] +
// data.shape[batch_dims+k:]. Float data runs on ops.GatherND (negative
// coordinates count from the end); int and BOOL data (a causal mask) go
// through byPosition.
func init() {
	register("GatherND", opDef{compile: compileGatherND})
}

func compileGatherND(c *ctx) (kernel, error) {
	if err := c.arity(2, 2, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("batch_dims"); err != nil {
		return nil, err
	}
	bd, err := c.n.intAttr("batch_dims", 0)
	if err != nil {
		return nil, err
	}
	if err := c.indices(1); err != nil {
		return nil, err
	}
	data, idx := c.in[0].shape, c.in[1].shape
	c.out[0] = info{elem: c.in[0].elem}
	if data != nil && idx != nil {
		if bd < 0 || bd >= int64(len(idx)) || bd >= int64(len(data)) {
			return nil, c.n.errorf("batch_dims %d for data %s and indices %s; expected 0 to %d", bd, shapeStr(data), shapeStr(idx), min(len(data), len(idx))-1)
		}
		b := int(bd)
		if !compatible(data[:b], idx[:b]) {
			return nil, c.n.errorf("data %s and indices %s differ in their first %d (batch) dims; expected them equal", shapeStr(data), shapeStr(idx), b)
		}
		if k := idx[len(idx)-1]; k >= 0 {
			if k < 1 || k > len(data)-b {
				return nil, c.n.errorf("indices %s has last dim %d for data %s with batch_dims %d; expected 1 to %d", shapeStr(idx), k, shapeStr(data), b, len(data)-b)
			}
			c.out[0].shape = append(append([]int{}, idx[:len(idx)-1]...), data[b+k:]...)
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := byPosition(in[0], func(x *tensor.Tensor) (*tensor.Tensor, error) { return ops.GatherND(x, in[1], int(bd)) })
		return []*tensor.Tensor{y}, err
	}, nil
}
