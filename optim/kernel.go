package optim

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// kernel is one rule's update on the CPU, on validated slices: parameter
// v, gradient g and slots s (in the rule's order), all of one length, with
// the step's coefficients u (rule.coef). The host applies L2 and the
// decoupled weight decay before the rule, so a kernel reads neither.
type kernel[T tensor.Float] func(u *ops.Update, v, g []T, s [][]T)

// hostKernel is a rule's CPU kernel in both float dtypes.
type hostKernel struct {
	f32 kernel[float32]
	f64 kernel[float64]
}

// run calls the kernel instance for v's dtype (float32 or float64, which
// newOptimizer and check have guaranteed, as they have the shapes): on the
// whole of v when rows is nil, else row by row on rows of v and the slots
// with the matching rows of g. With rows nil, g is dense, of v's shape;
// otherwise g holds the gradient of v's rows listed in rows (a sparse
// gradient, not empty), every other row's gradient is zero, and only
// those rows of v and the slots change.
func (k hostKernel) run(u *ops.Update, v, g *tensor.Tensor, rows []int, s *slotSet) {
	if v.DType() == tensor.Float32 {
		runRows(u, v.Float32s(), g.Float32s(), rows, slotData[float32](s), k.f32)
		return
	}
	runRows(u, v.Float64s(), g.Float64s(), rows, slotData[float64](s), k.f64)
}

// runRows is run on slices. A rule's kernel is elementwise, so running it
// on the gradient's rows is the dense update of those rows.
func runRows[T tensor.Float](u *ops.Update, v, g []T, rows []int, s [][]T, k kernel[T]) {
	if rows == nil && len(v) >= par.MinWork {
		// A large tensor's update in chunks over the cores (par.Rows):
		// each element's result is its own, so the bits do not change.
		par.Rows(len(v), 1, func() func(lo, hi int) {
			sc := make([][]T, len(s))
			return func(lo, hi int) {
				for j := range s {
					sc[j] = s[j][lo:hi]
				}
				k(u, v[lo:hi], g[lo:hi], sc)
			}
		})
		return
	}
	if rows == nil {
		k(u, v, g, s)
		return
	}
	w := len(g) / len(rows)
	sr := make([][]T, len(s))
	for i, r := range rows {
		for j := range s {
			sr[j] = s[j][r*w : (r+1)*w]
		}
		k(u, v[r*w:(r+1)*w], g[i*w:(i+1)*w], sr)
	}
}

// slotSet is one parameter's slots for an update: their tensors, and
// their data in slices of slices that the optimizer keeps from step to
// step, so that an update allocates nothing.
type slotSet struct {
	t   []*tensor.Tensor
	f32 [][]float32
	f64 [][]float64
}

// slotData returns the data of s's tensors as [][]T, in s's reused slice.
func slotData[T tensor.Float](s *slotSet) [][]T {
	d, ok := any(&s.f32).(*[][]T)
	if !ok {
		d = any(&s.f64).(*[][]T)
	}
	*d = (*d)[:0]
	for _, t := range s.t {
		*d = append(*d, tensor.Data[T](t))
	}
	return *d
}

// sqrt is math.Sqrt in T; for float32 the float64 root rounds to the
// correctly rounded float32 root.
func sqrt[T tensor.Float](x T) T { return T(math.Sqrt(float64(x))) }

// axpy sets y += a*x for float tensors of one dtype and size.
func axpy(a float64, x, y *tensor.Tensor) {
	if y.DType() == tensor.Float32 {
		axpyT(float32(a), x.Float32s(), y.Float32s())
		return
	}
	axpyT(a, x.Float64s(), y.Float64s())
}

// axpyT is axpy on slices, through vec.Axpy (AVX for float32, the same
// bits as the plain loop).
func axpyT[T tensor.Float](a T, x, y []T) { vec.Axpy(y, x, a) }

// scale sets t *= a for a float tensor.
func scale(a float64, t *tensor.Tensor) {
	if t.DType() == tensor.Float32 {
		scaleT(float32(a), t.Float32s())
		return
	}
	scaleT(a, t.Float64s())
}

func scaleT[T tensor.Float](a T, x []T) {
	for i := range x {
		x[i] *= a
	}
}
