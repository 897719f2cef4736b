package ops

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "softmax", Inputs: []string{"x"}, Grads: []int{0}})
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
	out := tensor.ZerosLike(in[0])
	switch dt {
	case tensor.Float32:
		softmaxKernel(in[0].Float32s(), out.Float32s(), outer, n, inner, log)
	case tensor.Float64:
		softmaxKernel(in[0].Float64s(), out.Float64s(), outer, n, inner, log)
	}
	return out, nil
}

// logSumExp returns the row maximum m and log Σ exp(x - m) over the n
// elements x[base], x[base+stride], ..., in float64.
func logSumExp[T tensor.Float](x []T, base, n, stride int) (m, ls float64) {
	m = math.Inf(-1)
	for k := 0; k < n; k++ {
		m = math.Max(m, float64(x[base+k*stride]))
	}
	s := 0.0
	for k := 0; k < n; k++ {
		s += math.Exp(float64(x[base+k*stride]) - m)
	}
	return m, math.Log(s)
}

// softmaxKernel writes softmax, or with log the log-softmax
// shifted - log Σ exp(shifted) where shifted = x - max, of x along the
// middle axis of [outer, n, inner] into y.
func softmaxKernel[T tensor.Float](x, y []T, outer, n, inner int, log bool) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			m, ls := logSumExp(x, base, n, inner)
			for k := 0; k < n; k++ {
				j := base + k*inner
				if log {
					y[j] = T(float64(x[j]) - m - ls)
				} else {
					y[j] = T(math.Exp(float64(x[j]) - m - ls))
				}
			}
		}
	}
}

func (o *softmaxOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	outer, n, inner, _ := o.dims(in)
	g := tensor.ZerosLike(out)
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
// dy - exp(y)·Σ dy for log_softmax.
func softmaxGrad[T tensor.Float](name string, y, dy, dx []T, outer, n, inner int) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			s := 0.0
			for k := 0; k < n; k++ {
				j := base + k*inner
				if name == "softmax" {
					s += float64(dy[j]) * float64(y[j])
				} else {
					s += float64(dy[j])
				}
			}
			for k := 0; k < n; k++ {
				j := base + k*inner
				if name == "softmax" {
					dx[j] = T(float64(y[j]) * (float64(dy[j]) - s))
				} else {
					dx[j] = T(float64(dy[j]) - math.Exp(float64(y[j]))*s)
				}
			}
		}
	}
}
