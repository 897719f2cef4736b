package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "cumsum", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(CumSumOp), CUDA: DeviceFallback})
}

// CumSumAttrs are cumsum's attributes, named as tf.math.cumsum and ONNX
// CumSum name them: the axis summed along (negative counts from the end),
// exclusive (each output leaves out its own element) and reverse (sums run
// from the end of the axis).
type CumSumAttrs struct {
	Axis      int  `json:"axis"`
	Exclusive bool `json:"exclusive"`
	Reverse   bool `json:"reverse"`
}

type cumsumOp struct{ a CumSumAttrs }

// CumSumOp returns the cumulative sum along an axis (tf.math.cumsum, ONNX
// CumSum, torch.cumsum without reverse and exclusive): for x of rank
// r >= 1 and axis length n, position i along the axis holds
//
//	y[i] = Σ x[j] over j ≤ i      (default)
//	       Σ x[j] over j < i      (exclusive)
//	       Σ x[j] over j ≥ i      (reverse)
//	       Σ x[j] over j > i      (exclusive and reverse)
//
// An empty sum is 0. Sums accumulate in the element type, in order along
// the axis. The gradient is the cumulative sum of the
// upstream gradient in the other direction with the same exclusive.
func CumSumOp(a CumSumAttrs) Op { return &cumsumOp{a: a} }

// CumSum returns the cumulative sum of x along axis; see CumSumOp.
func CumSum(x *tensor.Tensor, a CumSumAttrs) (*tensor.Tensor, error) {
	return run(CumSumOp(a), x)
}

func (o *cumsumOp) Name() string { return "cumsum" }

func (o *cumsumOp) Attrs() any { return o.a }

// Check validates the dtype, rank and axis (Checker).
func (o *cumsumOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("cumsum", in, 1); err != nil {
		return err
	}
	x := in[0]
	if !x.DType().IsFloat() {
		return Errorf("cumsum", in, "want float32 or float64 x")
	}
	if x.Rank() == 0 {
		return Errorf("cumsum", in, "want x of rank >= 1")
	}
	if _, err := tensor.Axis(o.a.Axis, x.Rank()); err != nil {
		return Errorf("cumsum", in, "%v", err)
	}
	return nil
}

func (o *cumsumOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("cumsum", in, 1); err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	return cumsumAlong(in[0], o.a.Axis, o.a.Exclusive, o.a.Reverse), nil
}

// cumsumAlong is the cumulative sum of float x along axis (valid).
func cumsumAlong(x *tensor.Tensor, axis int, exclusive, reverse bool) *tensor.Tensor {
	s := x.Shape()
	ax, _ := tensor.Axis(axis, len(s))
	outer, n, inner := s[:ax].Size(), s[ax], s[ax+1:].Size()
	y := tensor.Empty(x.DType(), s...)
	switch x.DType() {
	case tensor.Float32:
		cumsumKernel(x.Float32s(), y.Float32s(), outer, n, inner, exclusive, reverse)
	case tensor.Float64:
		cumsumKernel(x.Float64s(), y.Float64s(), outer, n, inner, exclusive, reverse)
	}
	return y
}

// cumsumKernel writes the cumulative sums of x viewed as [outer, n, inner]
// along n into y.
func cumsumKernel[T tensor.Float](x, y []T, outer, n, inner int, exclusive, reverse bool) {
	for o := range outer {
		for e := range inner {
			base := o*n*inner + e
			var acc T
			for k := range n {
				i := k
				if reverse {
					i = n - 1 - k
				}
				p := base + i*inner
				if exclusive {
					y[p] = acc
					acc += x[p]
				} else {
					acc += x[p]
					y[p] = acc
				}
			}
		}
	}
}

// Backward: y = C·x with C the (exclusive, reverse) summation matrix, so
// dx = Cᵀ·gout, the cumulative sum in the opposite direction.
func (o *cumsumOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 1)
	if need[0] {
		grads[0] = cumsumAlong(gout, o.a.Axis, o.a.Exclusive, !o.a.Reverse)
	}
	return grads, nil
}
