package export

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
)

// The reductions over axes (ops.ReduceOp): sum, mean, max, min and
// logsumexp as ReduceSum (axes as an input, opset 13), ReduceMean,
// ReduceMax, ReduceMin and ReduceLogSumExp (axes as an attribute until
// opset 18), with keepdims. No axes reduces every axis. A reduction over
// the batch, or over the rows of a ragged batch (across its sequences),
// would tie the result to the example's batch and is an error.
func init() {
	for name, opType := range map[string]string{"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "logsumexp": "ReduceLogSumExp"} {
		register(name, func(e *exporter, c call) (*val, error) { return e.reduce(c, opType) })
	}
}

func (e *exporter) reduce(c call, opType string) (*val, error) {
	a := c.attrs().(ops.ReduceAttrs)
	v := c.vs[0]
	rank := c.in[0].Rank()
	axes := a.Axes
	if len(axes) == 0 {
		for i := range rank {
			axes = append(axes, i)
		}
	}
	onnxAxes := make([]int64, len(axes))
	for i, ax := range axes {
		o, err := axisOf(v, ax, rank)
		if err != nil {
			return nil, err
		}
		if v.batch && o == 0 {
			return nil, fmt.Errorf("reduces over axis 0, the batch; expected axes within a row")
		}
		onnxAxes[i] = o
	}
	keep := attrInt("keepdims", int64(b2i(a.KeepDims)))
	out := &val{batch: v.batch, seq: v.seq}
	if opType == "ReduceSum" {
		out.name = e.apply(opType, []string{v.name, e.ints64(onnxAxes...)}, keep)
	} else {
		out.name = e.apply(opType, []string{v.name}, attrInts("axes", onnxAxes...), keep)
	}
	return out, nil
}
