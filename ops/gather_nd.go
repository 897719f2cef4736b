package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "gather_nd", Inputs: []string{"data", "indices"}, Grads: []int{0},
		Make: MakeOp(GatherNDOp), CUDA: DeviceFallback})
}

// GatherNDAttrs are gather_nd's attributes: the number of leading batch
// dims data and indices share (tf.gather_nd's and ONNX GatherND's
// batch_dims, default 0).
type GatherNDAttrs struct {
	BatchDims int `json:"batch_dims"`
}

type gatherNDOp struct {
	a GatherNDAttrs

	// Saved by Forward for Backward: the flat data offset each gathered
	// slice starts at, and the slice length.
	base  []int
	slice int
}

// GatherNDOp returns tf.gather_nd and ONNX GatherND (opset 12's
// batch_dims): data is a float tensor of rank r >= 1, indices an int32 or
// int64 tensor of rank q >= 1 whose first b = batch_dims dims equal
// data's, and whose last axis, of length k in [1, r-b], holds coordinates
// into data's dims b to b+k-1. Each coordinate tuple picks one slice:
//
//	out[i0..ib-1, j...] = data[i0..ib-1, indices[i0..ib-1, j..., :], ...]
//
// so the output shape is indices.shape[:q-1] + data.shape[b+k:]. A
// coordinate may be negative, counting from the end (ONNX's reading); one
// outside [-n, n) is an error (tf.gather_nd on CPU errors too). The
// gradient scatter-adds the upstream gradient's slices back, so repeated
// coordinates accumulate; indices have none.
func GatherNDOp(a GatherNDAttrs) Op { return &gatherNDOp{a: a} }

// GatherND returns the slices of data at indices; see GatherNDOp.
func GatherND(data, indices *tensor.Tensor, batchDims int) (*tensor.Tensor, error) {
	return run(GatherNDOp(GatherNDAttrs{BatchDims: batchDims}), data, indices)
}

func (o *gatherNDOp) Name() string { return "gather_nd" }

func (o *gatherNDOp) Attrs() any { return o.a }

// outShape is gather_nd's output shape for valid shapes.
func (o *gatherNDOp) outShape(ds, is tensor.Shape) tensor.Shape {
	k := is[len(is)-1]
	return append(is[:len(is)-1].Clone(), ds[o.a.BatchDims+k:]...)
}

// Check validates the dtypes, ranks, batch dims and the coordinate length
// from shapes alone (Checker); the coordinates are checked by Forward.
func (o *gatherNDOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("gather_nd", in, 2); err != nil {
		return err
	}
	if err := checkIndexed("gather_nd", in); err != nil {
		return err
	}
	ds, is := in[0].Shape(), in[1].Shape()
	b := o.a.BatchDims
	if len(ds) == 0 || len(is) == 0 {
		return Errorf("gather_nd", in, "want data and indices of rank >= 1")
	}
	if b < 0 || b >= len(is) || b >= len(ds) {
		return Errorf("gather_nd", in, "batch_dims %d, want 0 to min(rank(data), rank(indices)) - 1", b)
	}
	if !ds[:b].Equal(is[:b]) {
		return Errorf("gather_nd", in, "want data's and indices' first %d (batch) dims equal", b)
	}
	if k := is[len(is)-1]; k < 1 || k > len(ds)-b {
		return Errorf("gather_nd", in, "indices' last axis has length %d, want 1 to %d (data's rank less batch_dims)", k, len(ds)-b)
	}
	return nil
}

func (o *gatherNDOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	coords, err := checkedIndices("gather_nd", o, in, 2, 1)
	if err != nil {
		return nil, err
	}
	data, indices := in[0], in[1]
	ds, is := data.Shape(), indices.Shape()
	b, k := o.a.BatchDims, is[len(is)-1]
	st := ds.Strides()
	o.slice = ds[b+k:].Size()
	o.base = make([]int, len(coords)/k)
	// Rows of indices per batch element: the dims between the batch dims
	// and the coordinates.
	per := max(len(o.base)/max(is[:b].Size(), 1), 1)
	for u := range o.base {
		off := 0
		if b > 0 {
			off = (u / per) * st[b-1]
		}
		for j, v := range coords[u*k : (u+1)*k] {
			n := ds[b+j]
			if v < -n || v >= n {
				return nil, Errorf("gather_nd", in, "indices row %d: coordinate %d out of range [%d, %d) on axis %d", u, v, -n, n, b+j)
			}
			if v < 0 {
				v += n
			}
			off += v * st[b+j]
		}
		o.base[u] = off
	}
	out := tensor.Empty(data.DType(), o.outShape(ds, is)...)
	switch data.DType() {
	case tensor.Float32:
		gatherSlices(data.Float32s(), out.Float32s(), o.base, o.slice)
	case tensor.Float64:
		gatherSlices(data.Float64s(), out.Float64s(), o.base, o.slice)
	}
	return out, nil
}

// Backward adds each gout slice into the data slice Forward read.
func (o *gatherNDOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	if !need[0] {
		return grads, nil
	}
	grads[0] = tensor.ZerosLike(in[0])
	switch gout.DType() {
	case tensor.Float32:
		scatterNDKernel(grads[0].Float32s(), gout.Float32s(), o.base, o.slice, true)
	case tensor.Float64:
		scatterNDKernel(grads[0].Float64s(), gout.Float64s(), o.base, o.slice, true)
	}
	return grads, nil
}

// checkIndexed checks an indexing op's data in[0] (float) and indices
// in[1] (int32 or int64).
func checkIndexed(op string, in []*tensor.Tensor) error {
	if !in[0].DType().IsFloat() {
		return Errorf(op, in, "want float32 or float64 data")
	}
	if dt := in[1].DType(); dt != tensor.Int32 && dt != tensor.Int64 {
		return Errorf(op, in, "want int32 or int64 indices")
	}
	return nil
}
