package ops

import (
	"github.com/plumbml/plumb/internal/vec"
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "softmax", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SoftmaxAttrs) Op { return SoftmaxOp(a.Axis) }), CUDA: DeviceKernel})
}

// SoftmaxAttrs are softmax's and log_softmax's attributes: the axis.
type SoftmaxAttrs struct {
	Axis int `json:"axis"`
}

// softmaxOp is softmax ("softmax") or log-softmax ("log_softmax") over one
// axis; the two share the shape rules and the forward kernel.
type softmaxOp struct {
	name string
	axis int
}

// SoftmaxOp returns the op softmax(x) along axis (negative counts from the
// end; -1, the last axis, is tf.nn.softmax's default). It is computed
// stably, as TF's kernel: y = exp(x - max) / Σ exp(x - max) over the axis.
// The gradient is dx = y·(dy - Σ dy·y) over the axis (TF's _SoftmaxGrad).
func SoftmaxOp(axis int) Op { return &softmaxOp{name: "softmax", axis: axis} }

// Softmax returns softmax(x) along axis; see SoftmaxOp.
func Softmax(x *tensor.Tensor, axis int) (*tensor.Tensor, error) { return run(SoftmaxOp(axis), x) }

func (o *softmaxOp) Name() string { return o.name }

// dims splits x's shape around the axis into [outer, n, inner].
func (o *softmaxOp) dims(in []*tensor.Tensor) (outer, n, inner int, err error) {
	s := in[0].Shape()
	ax, err := tensor.Axis(o.axis, len(s))
	if err != nil {
		return 0, 0, 0, Errorf(o.name, in, "%v", err)
	}
	return s[:ax].Size(), s[ax], s[ax+1:].Size(), nil
}

// Check is softmax's and log_softmax's device-free check (Checker).
func (o *softmaxOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes(o.name, in, 1); err != nil {
		return err
	}
	_, _, _, err := o.dims(in)
	return err
}

func (o *softmaxOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return nil, err
	}
	outer, n, inner, err := o.dims(in)
	if err != nil {
		return nil, err
	}
	log := o.name == "log_softmax"
	out := tensor.Empty(in[0].DType(), in[0].Shape()...) // softmaxKernel writes every element
	softmaxInto(dt, in[0], out, outer, n, inner, log)
	return out, nil
}

// softmaxInto runs softmaxKernel on tensors of dtype dt.
func softmaxInto(dt tensor.DType, x, out *tensor.Tensor, outer, n, inner int, log bool) {
	switch dt {
	case tensor.Float32:
		softmaxKernel(x.Float32s(), out.Float32s(), outer, n, inner, log)
	case tensor.Float64:
		softmaxKernel(x.Float64s(), out.Float64s(), outer, n, inner, log)
	}
}

// softmaxKernel writes softmax, or with log the log-softmax
// (x - max) - log Σ exp(x - max), of x along the middle axis of
// [outer, n, inner] into y, in fused passes over contiguous memory: a
// pass for the maximum, one that writes exp(x - max) and sums it (float32
// through the vector exponential of internal/vec, sums in float64), and one
// that scales by 1/Σ or, for log-softmax, writes (x - max) - log Σ. With
// inner = 1 (the last axis) each row is one run; otherwise the passes run
// over the inner lanes of each outer block at once, row by row, so every
// inner loop walks two or three slices in step. Blocks are spread over the
// cores when the tensor is large.
func softmaxKernel[T tensor.Float](x, y []T, outer, n, inner int, log bool) {
	if n == 0 || inner == 0 {
		return
	}
	par.RowsOf(outer, n*inner, softmaxJob[T]{x: x, y: y, n: n, inner: inner, log: log})
}

// softmaxJob is softmaxKernel's loop over outer blocks; the lanes' maxima
// and sums (inner > 1) are pooled scratch of the range that uses them.
type softmaxJob[T tensor.Float] struct {
	x, y     []T
	n, inner int
	log      bool
}

func (j *softmaxJob[T]) Range(_, lo, hi int) {
	blk, inner := j.n*j.inner, j.inner
	var m, s []float64
	if inner > 1 {
		buf := scratch.Get[float64](2 * inner)
		defer scratch.Put(buf)
		m, s = (*buf)[:inner], (*buf)[inner:]
	}
	for o := lo; o < hi; o++ {
		xb, yb := j.x[o*blk:(o+1)*blk], j.y[o*blk:(o+1)*blk]
		if inner == 1 {
			softmaxRow(xb, yb, j.log)
		} else {
			softmaxLanes(xb, yb, inner, m, s, j.log)
		}
	}
}

// softmaxRow writes the softmax or log-softmax of one contiguous row x
// into y.
func softmaxRow[T tensor.Float](x, y []T, log bool) {
	y = y[:len(x)]
	m := vec.Max(x)
	if !log {
		sum := vec.ExpShiftSum(y, x, float64(m))
		vec.Scale(y, 1/sum)
		return
	}
	// (x - m) - log Σ, each difference rounded in turn: x - m is exact
	// where the log-probabilities are near 0, so they keep their relative
	// accuracy. The exponentials are only summed.
	sum := vec.ExpShiftSum(nil, x, float64(m))
	vec.ShiftTo(y, x, -m, T(-math.Log(sum)))
}

// softmaxLanes writes the softmax or log-softmax along the rows of one
// block x [n, inner] (each of the inner columns is one softmax) into y,
// with m and s of length inner as scratch for the columns' maxima and sums.
func softmaxLanes[T tensor.Float](x, y []T, inner int, m, s []float64, log bool) {
	n := len(x) / inner
	for i, v := range x[:inner] {
		m[i], s[i] = float64(v), 0
	}
	for k := 1; k < n; k++ {
		for i, v := range x[k*inner : (k+1)*inner] {
			m[i] = max(m[i], float64(v))
		}
	}
	for k := 0; k < n; k++ {
		xr, yr := x[k*inner:(k+1)*inner], y[k*inner:(k+1)*inner]
		for i, v := range xr {
			yr[i] = T(float64(v) - m[i])
		}
		vec.ExpShiftSum(yr, yr, 0)
		for i, v := range yr {
			s[i] += float64(v)
		}
	}
	if log {
		for i := range s {
			s[i] = math.Log(s[i])
		}
		for k := 0; k < n; k++ {
			xr, yr := x[k*inner:(k+1)*inner], y[k*inner:(k+1)*inner]
			for i, v := range xr {
				yr[i] = T((float64(v) - m[i]) - s[i])
			}
		}
		return
	}
	for i := range s {
		s[i] = 1 / s[i]
	}
	for k := 0; k < n; k++ {
		yr := y[k*inner : (k+1)*inner]
		for i, v := range yr {
			yr[i] = T(float64(v) * s[i])
		}
	}
}

func (o *softmaxOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	outer, n, inner, _ := o.dims(in)
	g := tensor.Empty(out.DType(), out.Shape()...) // softmaxGrad writes every element
	switch out.DType() {
	case tensor.Float32:
		softmaxGrad(o.name, out.Float32s(), gout.Float32s(), g.Float32s(), outer, n, inner)
	case tensor.Float64:
		softmaxGrad(o.name, out.Float64s(), gout.Float64s(), g.Float64s(), outer, n, inner)
	}
	return []*tensor.Tensor{g}, nil
}

// softmaxGrad writes dx for output y and upstream gradient dy along the
// middle axis of [outer, n, inner]: y·(dy - Σ dy·y) for softmax and
// dy - exp(y)·Σ dy for log_softmax, with the sums in float64, in one pass
// for the sum and one for dx per row (or per block of inner lanes, as
// softmaxKernel), on all cores for large tensors.
func softmaxGrad[T tensor.Float](name string, y, dy, dx []T, outer, n, inner int) {
	if n == 0 || inner == 0 {
		return
	}
	log := name == "log_softmax"
	blk := n * inner
	par.Rows(outer, blk, func() func(lo, hi int) {
		s := make([]float64, inner)
		return func(lo, hi int) {
			for o := lo; o < hi; o++ {
				yb, gb, xb := y[o*blk:(o+1)*blk], dy[o*blk:(o+1)*blk], dx[o*blk:(o+1)*blk]
				if inner == 1 {
					softmaxGradRow(yb, gb, xb, log)
				} else {
					softmaxGradLanes(yb, gb, xb, inner, s, log)
				}
			}
		}
	})
}

// softmaxGradRow is softmaxGrad on one contiguous row.
func softmaxGradRow[T tensor.Float](y, dy, dx []T, log bool) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	s := 0.0
	if log {
		for _, g := range dy {
			s += float64(g)
		}
		vec.ExpShiftSum(dx, y, 0) // exp(y) = softmax, through the vector exponential
		for i, p := range dx {
			dx[i] = T(float64(dy[i]) - float64(p)*s)
		}
		return
	}
	for i, v := range y {
		s += float64(v) * float64(dy[i])
	}
	for i, v := range y {
		dx[i] = T(float64(v) * (float64(dy[i]) - s))
	}
}

// softmaxGradLanes is softmaxGrad on one block [n, inner], with s of
// length inner as scratch for the columns' sums.
func softmaxGradLanes[T tensor.Float](y, dy, dx []T, inner int, s []float64, log bool) {
	n := len(y) / inner
	clear(s)
	for k := 0; k < n; k++ {
		yr, gr := y[k*inner:(k+1)*inner], dy[k*inner:(k+1)*inner]
		if log {
			for i, g := range gr {
				s[i] += float64(g)
			}
			continue
		}
		for i, v := range yr {
			s[i] += float64(v) * float64(gr[i])
		}
	}
	for k := 0; k < n; k++ {
		yr, gr, xr := y[k*inner:(k+1)*inner], dy[k*inner:(k+1)*inner], dx[k*inner:(k+1)*inner]
		if log { // exp(y) = softmax, through the vector exponential
			vec.ExpShiftSum(xr, yr, 0)
			for i, p := range xr {
				xr[i] = T(float64(gr[i]) - float64(p)*s[i])
			}
			continue
		}
		for i, v := range yr {
			xr[i] = T(float64(v) * (float64(gr[i]) - s[i]))
		}
	}
}
