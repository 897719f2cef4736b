package ops

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "scatter_nd", Inputs: []string{"data", "indices", "updates"}, Grads: []int{0, 2},
		Make: MakeOp(ScatterNDOp), CUDA: DeviceFallback})
}

// ScatterReduction is how scatter_nd combines an update with the element
// it lands on (ONNX ScatterND's reduction attribute).
type ScatterReduction int

const (
	// ScatterNone (the default) replaces the element; indices must then
	// be distinct, as ONNX requires.
	ScatterNone ScatterReduction = iota
	// ScatterAdd adds the update to the element; repeated indices
	// accumulate.
	ScatterAdd
)

func (r ScatterReduction) String() string {
	switch r {
	case ScatterNone:
		return "none"
	case ScatterAdd:
		return "add"
	}
	return fmt.Sprintf("ScatterReduction(%d)", int(r))
}

// UnmarshalText reads a reduction by its ONNX name: "none" (or "") or
// "add", as the parity goldens write it.
func (r *ScatterReduction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "none":
		*r = ScatterNone
	case "add":
		*r = ScatterAdd
	default:
		return fmt.Errorf("unknown scatter reduction %q (want none or add)", b)
	}
	return nil
}

// MarshalText writes the reduction's ONNX name.
func (r ScatterReduction) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// ScatterNDAttrs are scatter_nd's attributes: ONNX ScatterND's reduction
// (its JSON name differs from the attribute's, "reduction", which the
// losses' LossReduction holds in ops.Attrs).
type ScatterNDAttrs struct {
	Reduction ScatterReduction `json:"scatter_reduction"`
}

type scatterNDOp struct {
	a ScatterNDAttrs

	// Saved by Forward for Backward: the flat data offset each update
	// slice starts at, and the slice length.
	base  []int
	slice int
}

// ScatterNDOp returns ONNX ScatterND (opset 16's reductions none and add;
// tf.tensor_scatter_nd_update and tf.tensor_scatter_nd_add): a copy of
// data with slices replaced by (or added to) updates. data is a float
// tensor of rank r >= 1; indices an int32 or int64 tensor of rank q >= 1
// whose last axis, of length k in [1, r], holds the coordinates of one
// slice data[i0, ..., ik-1, :, ...]; updates has the dtype of data and the
// shape indices.shape[:q-1] + data.shape[k:], one slice per coordinate
// tuple:
//
//	out = data; out[indices[i0, ..., iq-2]] (=, +=) updates[i0, ..., iq-2]
//
// A coordinate may be negative, counting from the end (ONNX Runtime's
// reading); one outside [-data.shape[j], data.shape[j]) is an error, and so
// are repeated coordinates under ScatterNone (ONNX leaves their result
// undefined). The gradient is gout for data, zeroed where ScatterNone
// replaced, and gout's slices at indices for updates; indices have none.
func ScatterNDOp(a ScatterNDAttrs) Op { return &scatterNDOp{a: a} }

// ScatterND returns data with updates scattered into it at indices; see
// ScatterNDOp.
func ScatterND(data, indices, updates *tensor.Tensor, reduction ScatterReduction) (*tensor.Tensor, error) {
	return run(ScatterNDOp(ScatterNDAttrs{Reduction: reduction}), data, indices, updates)
}

func (o *scatterNDOp) Name() string { return "scatter_nd" }

func (o *scatterNDOp) Attrs() any { return o.a }

// Check validates the dtypes, ranks, shapes and the reduction from shapes
// alone (Checker); the coordinates are checked by Forward.
func (o *scatterNDOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("scatter_nd", in, 3); err != nil {
		return err
	}
	data, indices, updates := in[0], in[1], in[2]
	if !data.DType().IsFloat() || updates.DType() != data.DType() {
		return Errorf("scatter_nd", in, "want float32 or float64 data and updates of one dtype")
	}
	if dt := indices.DType(); dt != tensor.Int32 && dt != tensor.Int64 {
		return Errorf("scatter_nd", in, "want int32 or int64 indices")
	}
	if o.a.Reduction != ScatterNone && o.a.Reduction != ScatterAdd {
		return Errorf("scatter_nd", in, "unknown reduction %v (want ScatterNone or ScatterAdd)", o.a.Reduction)
	}
	ds, is := data.Shape(), indices.Shape()
	if len(ds) == 0 || len(is) == 0 {
		return Errorf("scatter_nd", in, "want data and indices of rank >= 1")
	}
	k := is[len(is)-1]
	if k < 1 || k > len(ds) {
		return Errorf("scatter_nd", in, "indices' last axis has length %d, want 1 to data's rank %d", k, len(ds))
	}
	want := append(is[:len(is)-1].Clone(), ds[k:]...)
	if !updates.Shape().Equal(want) {
		return Errorf("scatter_nd", in, "want updates of shape %v (indices.shape[:-1] + data.shape[%d:])", want, k)
	}
	return nil
}

func (o *scatterNDOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	coords, err := checkedIndices("scatter_nd", o, in, 3, 1)
	if err != nil {
		return nil, err
	}
	data, indices := in[0], in[1]
	ds := data.Shape()
	k := indices.Shape()[indices.Rank()-1]
	st := ds.Strides()
	o.slice = ds[k:].Size()
	o.base = make([]int, len(coords)/k)
	// The bases written so far, under ScatterNone; slices of no element
	// share base 0 and write nothing, so they are not compared.
	var seen map[int]bool
	if o.a.Reduction == ScatterNone && o.slice > 0 {
		seen = make(map[int]bool, len(o.base))
	}
	for u := range o.base {
		off := 0
		for j, v := range coords[u*k : (u+1)*k] {
			if v < -ds[j] || v >= ds[j] {
				return nil, Errorf("scatter_nd", in, "indices row %d: coordinate %d out of range [%d, %d) on axis %d", u, v, -ds[j], ds[j], j)
			}
			if v < 0 {
				v += ds[j]
			}
			off += v * st[j]
		}
		if seen != nil {
			if seen[off] {
				return nil, Errorf("scatter_nd", in, "indices row %d repeats the coordinates %v of an earlier row; reduction none needs distinct rows", u, coords[u*k:(u+1)*k])
			}
			seen[off] = true
		}
		o.base[u] = off
	}
	out := data.Clone()
	switch data.DType() {
	case tensor.Float32:
		scatterNDKernel(out.Float32s(), in[2].Float32s(), o.base, o.slice, o.a.Reduction == ScatterAdd)
	case tensor.Float64:
		scatterNDKernel(out.Float64s(), in[2].Float64s(), o.base, o.slice, o.a.Reduction == ScatterAdd)
	}
	return out, nil
}

// scatterNDKernel writes (or adds, when add) update slice u at out[base[u]:].
func scatterNDKernel[T tensor.Float](out, upd []T, base []int, slice int, add bool) {
	for u, b := range base {
		dst, src := out[b:b+slice], upd[u*slice:(u+1)*slice]
		if !add {
			copy(dst, src)
			continue
		}
		for i, v := range src {
			dst[i] += v
		}
	}
}

func (o *scatterNDOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 3)
	if need[0] {
		grads[0] = gout.Clone()
		if o.a.Reduction == ScatterNone {
			switch gout.DType() {
			case tensor.Float32:
				zeroSlices(grads[0].Float32s(), o.base, o.slice)
			case tensor.Float64:
				zeroSlices(grads[0].Float64s(), o.base, o.slice)
			}
		}
	}
	if need[2] {
		grads[2] = tensor.Empty(gout.DType(), in[2].Shape()...)
		switch gout.DType() {
		case tensor.Float32:
			gatherSlices(gout.Float32s(), grads[2].Float32s(), o.base, o.slice)
		case tensor.Float64:
			gatherSlices(gout.Float64s(), grads[2].Float64s(), o.base, o.slice)
		}
	}
	return grads, nil
}

// zeroSlices zeroes g[base[u]:base[u]+slice] for every u: the elements
// ScatterNone replaced take no gradient back to data.
func zeroSlices[T tensor.Float](g []T, base []int, slice int) {
	for _, b := range base {
		clear(g[b : b+slice])
	}
}

// gatherSlices copies g[base[u]:base[u]+slice] to row u of dst.
func gatherSlices[T tensor.Float](g, dst []T, base []int, slice int) {
	for u, b := range base {
		copy(dst[u*slice:(u+1)*slice], g[b:b+slice])
	}
}
