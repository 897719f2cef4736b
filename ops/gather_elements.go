package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "gather_elements", Inputs: []string{"data", "indices"}, Grads: []int{0},
		Make: MakeOp(GatherElementsOp), CUDA: DeviceFallback})
}

// GatherElementsAttrs are gather_elements' attributes: the axis it indexes
// (ONNX GatherElements' axis, default 0).
type GatherElementsAttrs struct {
	Axis int `json:"axis"`
}

type gatherElementsOp struct {
	a   GatherElementsAttrs
	src []int // Forward's flat data offset of each output element, for Backward
}

// GatherElementsOp returns ONNX GatherElements (torch.gather,
// numpy.take_along_axis without broadcasting): data is a float tensor of
// rank r >= 1 and indices an int32 or int64 tensor of the same rank, and
// the output has indices' shape with, for axis 1 of a rank-3 data,
//
//	out[i][j][k] = data[i][indices[i][j][k]][k]
//
// On every axis but axis indices may be shorter than data (PyTorch's
// rule; ONNX Runtime's too), never longer. An index may be negative,
// counting from the end; one outside [-data.shape[axis],
// data.shape[axis]) is an error. The gradient scatter-adds the upstream
// gradient into the elements read, so repeated indices accumulate;
// indices have no gradient.
func GatherElementsOp(a GatherElementsAttrs) Op { return &gatherElementsOp{a: a} }

// GatherElements returns data's elements at indices along axis; see
// GatherElementsOp.
func GatherElements(data, indices *tensor.Tensor, axis int) (*tensor.Tensor, error) {
	return run(GatherElementsOp(GatherElementsAttrs{Axis: axis}), data, indices)
}

func (o *gatherElementsOp) Name() string { return "gather_elements" }

func (o *gatherElementsOp) Attrs() any { return o.a }

// Check validates the inputs' dtypes, ranks, shapes and the axis from
// shapes alone (Checker); the index values are checked by Forward.
func (o *gatherElementsOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("gather_elements", in, 2); err != nil {
		return err
	}
	data, indices := in[0], in[1]
	if !data.DType().IsFloat() {
		return Errorf("gather_elements", in, "want float32 or float64 data")
	}
	if dt := indices.DType(); dt != tensor.Int32 && dt != tensor.Int64 {
		return Errorf("gather_elements", in, "want int32 or int64 indices")
	}
	if data.Rank() == 0 || indices.Rank() != data.Rank() {
		return Errorf("gather_elements", in, "want data of rank >= 1 and indices of the same rank")
	}
	ax, err := tensor.Axis(o.a.Axis, data.Rank())
	if err != nil {
		return Errorf("gather_elements", in, "%v", err)
	}
	ds, is := data.Shape(), indices.Shape()
	for d := range ds {
		if d != ax && is[d] > ds[d] {
			return Errorf("gather_elements", in, "indices axis %d has size %d, more than data's %d (only axis %d may be longer)", d, is[d], ds[d], ax)
		}
	}
	return nil
}

func (o *gatherElementsOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	idx, err := checkedIndices("gather_elements", o, in, 2, 1)
	if err != nil {
		return nil, err
	}
	data, indices := in[0], in[1]
	ax, _ := tensor.Axis(o.a.Axis, data.Rank())
	n := data.Shape()[ax]
	for _, v := range idx {
		if v < -n || v >= n {
			return nil, Errorf("gather_elements", in, "index %d out of range [%d, %d) on axis %d", v, -n, n, ax)
		}
	}
	o.src = elementOffsets(data.Shape(), indices.Shape(), ax, idx)
	out := tensor.Empty(data.DType(), indices.Shape()...)
	switch data.DType() {
	case tensor.Float32:
		gatherElementsKernel(data.Float32s(), out.Float32s(), o.src)
	case tensor.Float64:
		gatherElementsKernel(data.Float64s(), out.Float64s(), o.src)
	}
	return out, nil
}

// checkedIndices runs a Forward's checks of its n host inputs (count,
// nils, host memory, then the op's own Check) and returns the values of
// the integer input i.
func checkedIndices(op string, c Checker, in []*tensor.Tensor, n, i int) ([]int, error) {
	if err := checkArity(op, in, n); err != nil {
		return nil, err
	}
	if err := c.Check(in); err != nil {
		return nil, err
	}
	idx, err := in[i].Ints()
	if err != nil {
		return nil, Errorf(op, in, "%v", err)
	}
	return idx, nil
}

// elementOffsets returns the flat offset into data (of shape ds) of each
// element of indices (of shape is, values idx validated in [-n, n)): its
// own position on every axis but ax, and its index value on ax.
func elementOffsets(ds, is tensor.Shape, ax int, idx []int) []int {
	st := ds.Strides()
	base := append([]int(nil), st...)
	base[ax] = 0
	n := ds[ax]
	src := make([]int, len(idx))
	bcastRuns(is, [][]int{base}, func(o int, offs, step []int, cnt int) {
		for i := 0; i < cnt; i++ {
			v := idx[o+i]
			if v < 0 {
				v += n
			}
			src[o+i] = offs[0] + i*step[0] + v*st[ax]
		}
	})
	return src
}

func gatherElementsKernel[T tensor.Float](data, out []T, src []int) {
	for i, s := range src {
		out[i] = data[s]
	}
}

// Backward scatter-adds gout into the data elements Forward read.
func (o *gatherElementsOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	if !need[0] {
		return grads, nil
	}
	grads[0] = tensor.ZerosLike(in[0])
	switch gout.DType() {
	case tensor.Float32:
		scatterAddKernel(gout.Float32s(), grads[0].Float32s(), o.src)
	case tensor.Float64:
		scatterAddKernel(gout.Float64s(), grads[0].Float64s(), o.src)
	}
	return grads, nil
}

// scatterAddKernel adds each g[i] into dst[dst offset i].
func scatterAddKernel[T tensor.Float](g, dst []T, to []int) {
	for i, d := range to {
		dst[d] += g[i]
	}
}
