package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// Reductions over any set of axes, with the semantics of TF's
// tf.math.reduce_sum, reduce_mean, reduce_max, reduce_min,
// reduce_variance and reduce_logsumexp: axes may be negative, no axes means
// every axis, and keepDims keeps each reduced axis with size 1. Like the
// elementwise ops they share one kernel, eachReduced, which maps every input
// element to the output element it folds into; they accumulate in float64.
// Sums and means over trailing axes (a loss's Sum over everything among
// them), where each output folds one contiguous run, take vector sums in
// chunks over the cores instead (sumRuns), and their gradients fill the
// runs (fillRuns).
//
// Over an empty axis they return TF's identities: sum 0, max -Inf, min +Inf,
// logsumexp -Inf, and mean and variance NaN (0/0).
var reduceNames = []string{"sum", "mean", "max", "min", "variance", "logsumexp"}

func init() {
	for _, name := range reduceNames {
		register(Spec{Name: name, Inputs: []string{"x"}, Grads: []int{0},
			Make: MakeOp(func(a ReduceAttrs) Op { return ReduceOp(name, a.Axes, a.KeepDims) }), CUDA: DeviceKernel})
	}
}

// ReduceAttrs are the reductions' attributes: the axes (none: every axis)
// and whether each reduced axis stays, with size 1.
type ReduceAttrs struct {
	Axes     []int `json:"axes"`
	KeepDims bool  `json:"keepdims"`
}

type reduceOp struct {
	name     string
	axes     []int
	keepDims bool

	// Saved by Forward for Backward.
	keep tensor.Shape // x's shape with every reduced axis set to 1
	n    int          // elements folded into each output element
	mean []float64    // variance: the mean of each output's elements
}

// ReduceOp returns the reduction name ("sum", "mean", "max", "min",
// "variance", "logsumexp") over axes; it panics on another name.
//
// Gradients follow TF: sum and mean broadcast the upstream gradient back
// (mean divides by the count); max and min split it equally among the
// elements that tie for the extreme (TF's _MinOrMaxGrad); variance, the
// population variance (ddof 0), has 2(x-mean)/N; logsumexp has the softmax
// weights exp(x - y).
func ReduceOp(name string, axes []int, keepDims bool) Op {
	if !slices.Contains(reduceNames, name) {
		return unknownOp{name, fmt.Errorf("ops: no reduction %q", name)}
	}
	return &reduceOp{name: name, axes: slices.Clone(axes), keepDims: keepDims}
}

// Sum returns the sum of x over axes (all axes if none); see ReduceOp.
func Sum(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("sum", axes, keepDims), x)
}

// Mean returns the mean of x over axes (tf.math.reduce_mean).
func Mean(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("mean", axes, keepDims), x)
}

// Max returns the largest element of x over axes (tf.math.reduce_max).
func Max(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("max", axes, keepDims), x)
}

// Min returns the smallest element of x over axes (tf.math.reduce_min).
func Min(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("min", axes, keepDims), x)
}

// Variance returns the population variance (ddof 0) of x over axes
// (tf.math.reduce_variance).
func Variance(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("variance", axes, keepDims), x)
}

// LogSumExp returns log(Σ exp(x)) over axes, computed stably as
// m + log(Σ exp(x - m)) with m the finite maximum, or 0 where the maximum
// is infinite (tf.math.reduce_logsumexp).
func LogSumExp(x *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	return run(ReduceOp("logsumexp", axes, keepDims), x)
}

func (o *reduceOp) Name() string { return o.name }

// reduceShapes resolves axes against x's rank. keep is x's shape with the
// reduced axes set to 1, out the output shape and n the number of elements
// folded into each output element.
func reduceShapes(op string, x *tensor.Tensor, axes []int, keepDims bool) (keep, out tensor.Shape, n int, err error) {
	in := []*tensor.Tensor{x}
	reduced := make([]bool, x.Rank())
	for _, a := range axes {
		ax, err := tensor.Axis(a, x.Rank())
		if err != nil {
			return nil, nil, 0, Errorf(op, in, "%v", err)
		}
		if reduced[ax] {
			return nil, nil, 0, Errorf(op, in, "axis %d repeated in axes %v", a, axes)
		}
		reduced[ax] = true
	}
	keep = x.Shape().Clone()
	n = 1
	for ax, d := range x.Shape() {
		if len(axes) == 0 || reduced[ax] {
			keep[ax] = 1
			n *= d
			if keepDims {
				out = append(out, 1)
			}
			continue
		}
		out = append(out, d)
	}
	return keep, append(tensor.Shape{}, out...), n, nil
}

// Check is the reductions' device-free check (Checker): the dtype and
// axes in range, none repeated.
func (o *reduceOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes(o.name, in, 1); err != nil {
		return err
	}
	_, _, _, err := reduceShapes(o.name, in[0], o.axes, o.keepDims)
	return err
}

func (o *reduceOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return nil, err
	}
	x := in[0]
	keep, shape, n, err := reduceShapes(o.name, x, o.axes, o.keepDims)
	if err != nil {
		return nil, err
	}
	o.keep, o.n = keep, n
	st := bcastStrides(keep, x.Shape())
	var acc []float64
	switch dt {
	case tensor.Float32:
		acc, o.mean = reduceKernel(o.name, x.Float32s(), x.Shape(), st, keep.Size(), n)
	case tensor.Float64:
		acc, o.mean = reduceKernel(o.name, x.Float64s(), x.Shape(), st, keep.Size(), n)
	}
	out := tensor.Zeros(dt, shape...)
	for i, v := range acc {
		out.SetAt(i, v)
	}
	return out, nil
}

// eachReduced calls f(i, o) for every flat index i of an input of the given
// shape, with o the flat index of the output element that i folds into; st
// are the output's strides read under the input's shape (0 on reduced
// axes), as bcastStrides gives them. It is the one walker of every
// reduction, forward and backward.
func eachReduced(shape tensor.Shape, st []int, f func(i, o int)) {
	bcastRuns(shape, [][]int{st}, func(i int, offs, step []int, n int) {
		for k := 0; k < n; k++ {
			f(i+k, offs[0]+k*step[0])
		}
	})
}

// reduceKernel returns the reduction name of x into size outputs of n
// elements each, and for variance also the per-output means.
func reduceKernel[T tensor.Float](name string, x []T, shape tensor.Shape, st []int, size, n int) (acc, mean []float64) {
	acc = make([]float64, size)
	switch name {
	case "sum", "mean":
		if trailingRuns(shape, st) {
			sumRuns(x, acc, n)
		} else {
			eachReduced(shape, st, func(i, o int) { acc[o] += float64(x[i]) })
		}
		if name == "mean" {
			for o := range acc {
				acc[o] /= float64(n)
			}
		}
	case "max", "min":
		init, pick := math.Inf(-1), math.Max
		if name == "min" {
			init, pick = math.Inf(1), math.Min
		}
		for o := range acc {
			acc[o] = init
		}
		eachReduced(shape, st, func(i, o int) { acc[o] = pick(acc[o], float64(x[i])) })
	case "variance": // two passes: mean, then mean squared deviation
		mean, _ = reduceKernel("mean", x, shape, st, size, n)
		eachReduced(shape, st, func(i, o int) {
			d := float64(x[i]) - mean[o]
			acc[o] += d * d
		})
		for o := range acc {
			acc[o] /= float64(n)
		}
	case "logsumexp":
		shift, _ := reduceKernel("max", x, shape, st, size, n)
		for o, m := range shift {
			if math.IsInf(m, 0) || math.IsNaN(m) {
				shift[o] = 0
			}
		}
		eachReduced(shape, st, func(i, o int) { acc[o] += math.Exp(float64(x[i]) - shift[o]) })
		for o := range acc {
			acc[o] = shift[o] + math.Log(acc[o])
		}
	}
	return acc, mean
}

func (o *reduceOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x := in[0]
	g := zerosOrEmpty(o.name != "max" && o.name != "min", x.DType(), x.Shape()) // the others write every element
	st := bcastStrides(o.keep, x.Shape())
	switch x.DType() {
	case tensor.Float32:
		reduceGrad(o.name, x.Float32s(), out.Float32s(), gout.Float32s(), g.Float32s(), x.Shape(), st, o.n, o.mean)
	case tensor.Float64:
		reduceGrad(o.name, x.Float64s(), out.Float64s(), gout.Float64s(), g.Float64s(), x.Shape(), st, o.n, o.mean)
	}
	return []*tensor.Tensor{g}, nil
}

// reduceGrad writes g, the gradient for x of the reduction name whose
// output is y and upstream gradient gout (both in the output's flat order).
func reduceGrad[T tensor.Float](name string, x, y, gout, g []T, shape tensor.Shape, st []int, n int, mean []float64) {
	switch name {
	case "sum":
		if trailingRuns(shape, st) {
			fillRuns(g, n, func(o int) T { return gout[o] })
			return
		}
		eachReduced(shape, st, func(i, o int) { g[i] = gout[o] })
	case "mean":
		if trailingRuns(shape, st) {
			fillRuns(g, n, func(o int) T { return T(float64(gout[o]) / float64(n)) })
			return
		}
		eachReduced(shape, st, func(i, o int) { g[i] = T(float64(gout[o]) / float64(n)) })
	case "max", "min": // split equally among the tied extremes
		ties := make([]int, len(y))
		eachReduced(shape, st, func(i, o int) {
			if x[i] == y[o] {
				ties[o]++
			}
		})
		eachReduced(shape, st, func(i, o int) {
			if x[i] == y[o] {
				g[i] = T(float64(gout[o]) / float64(ties[o]))
			}
		})
	case "variance":
		eachReduced(shape, st, func(i, o int) {
			g[i] = T(float64(gout[o]) * 2 * (float64(x[i]) - mean[o]) / float64(n))
		})
	case "logsumexp":
		eachReduced(shape, st, func(i, o int) {
			g[i] = T(float64(gout[o]) * math.Exp(float64(x[i])-float64(y[o])))
		})
	}
}

// trailingRuns reports whether each output element of a reduction folds one
// contiguous run of the input, output o the elements [o·n, (o+1)·n): the
// reduced axes (stride 0 in st, as bcastStrides gives them) come after
// every kept one, axes of size 1 aside.
func trailingRuns(shape tensor.Shape, st []int) bool {
	reduced := false
	for i, d := range shape {
		switch {
		case d == 1:
		case st[i] == 0:
			reduced = true
		case reduced:
			return false
		}
	}
	return true
}

// sumRuns sets acc[o] to the float64 sum of x[o·n, (o+1)·n) with vector
// sums (vec.SumF64), the outputs spread over the cores; a single output's
// run is summed in chunks of par.RowTaskElems over the cores and the
// chunks' sums added in order, so the result does not depend on the
// number of cores.
func sumRuns[T tensor.Float](x []T, acc []float64, n int) {
	if len(acc) == 1 && n > par.RowTaskElems {
		chunk := par.RowTaskElems
		parts := make([]float64, (n+chunk-1)/chunk)
		par.Rows(len(parts), chunk, func() func(lo, hi int) {
			return func(lo, hi int) {
				for c := lo; c < hi; c++ {
					parts[c] = vec.SumF64(x[c*chunk : min((c+1)*chunk, n)])
				}
			}
		})
		for _, v := range parts {
			acc[0] += v
		}
		return
	}
	par.Rows(len(acc), n, func() func(lo, hi int) {
		return func(lo, hi int) {
			for o := lo; o < hi; o++ {
				acc[o] = vec.SumF64(x[o*n : (o+1)*n])
			}
		}
	})
}

// fillRuns sets every element of run o of g (g[o·n, (o+1)·n)) to value(o),
// in chunks over the cores.
func fillRuns[T tensor.Float](g []T, n int, value func(o int) T) {
	par.Elements(len(g), func(lo, hi int) {
		for i := lo; i < hi; {
			o := i / n
			end := min(hi, (o+1)*n)
			v := value(o)
			for k := i; k < end; k++ {
				g[k] = v
			}
			i = end
		}
	})
}
