package ops

import (
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

// The four arithmetic ops (add, sub, mul, div) have loops of their own, with
// the op chosen once per run of the innermost axis instead of a function
// call per element, and with each input either moving along the run or
// held (a broadcast axis). They compute in the dtype: for these four ops
// that gives the reference's result (float64, then rounded) bit for bit,
// since rounding twice is harmless when the wider format has at least 2p+2
// bits of a p-bit format (Figueroa, "When is double rounding innocuous?",
// 1995): 53 >= 2·24+2. The other binary ops keep the table's kernel.
type arith int

const (
	notArith arith = iota
	arithAdd
	arithSub
	arithMul
	arithDiv
)

func arithOf(name string) arith {
	switch name {
	case "add":
		return arithAdd
	case "sub":
		return arithSub
	case "mul":
		return arithMul
	case "div":
		return arithDiv
	}
	return notArith
}

// arithKernel writes out = a op b over the broadcast shape; st are the
// inputs' broadcast strides.
func arithKernel[T tensor.Float](op arith, a, b, out []T, shape tensor.Shape, st [][]int) {
	if len(a) == len(out) && len(b) == len(out) { // no broadcasting: one run, in chunks over the cores
		par.ElementsOf(len(out), arithJob[T]{op, a, b, out})
		return
	}
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		arithRun(op, out[o:o+n], a[offs[0]:], step[0], b[offs[1]:], step[1])
	})
}

// arithJob is arithKernel's loop body without broadcasting.
type arithJob[T tensor.Float] struct {
	op        arith
	a, b, out []T
}

func (j *arithJob[T]) Range(_, lo, hi int) {
	arithRun(j.op, j.out[lo:hi], j.a[lo:hi], 1, j.b[lo:hi], 1)
}

// arithRun writes out[i] = a[i·sa] op b[i·sb].
func arithRun[T tensor.Float](op arith, out, a []T, sa int, b []T, sb int) {
	n := len(out)
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:n], b[:n]
		switch op {
		case arithAdd:
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case arithSub:
			for i := range out {
				out[i] = a[i] - b[i]
			}
		case arithMul:
			for i := range out {
				out[i] = a[i] * b[i]
			}
		case arithDiv:
			for i := range out {
				out[i] = a[i] / b[i]
			}
		}
	case sa == 1 && sb == 0:
		a, y := a[:n], b[0]
		switch op {
		case arithAdd:
			for i := range out {
				out[i] = a[i] + y
			}
		case arithSub:
			for i := range out {
				out[i] = a[i] - y
			}
		case arithMul:
			for i := range out {
				out[i] = a[i] * y
			}
		case arithDiv:
			for i := range out {
				out[i] = a[i] / y
			}
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:n]
		switch op {
		case arithAdd:
			for i := range out {
				out[i] = x + b[i]
			}
		case arithSub:
			for i := range out {
				out[i] = x - b[i]
			}
		case arithMul:
			for i := range out {
				out[i] = x * b[i]
			}
		case arithDiv:
			for i := range out {
				out[i] = x / b[i]
			}
		}
	default: // other strides: transposed views never reach here, but stay correct
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			switch op {
			case arithAdd:
				out[i] = x + y
			case arithSub:
				out[i] = x - y
			case arithMul:
				out[i] = x * y
			case arithDiv:
				out[i] = x / y
			}
		}
	}
}

// arithGrad writes g, the gradient of input k (0: a, 1: b) over the
// broadcast shape, before it is summed to k's shape: gout for add and for
// sub's a, -gout for sub's b, gout·b and gout·a for mul, gout·(1/b) and
// gout·(-y/b) for div, the last two with the factor rounded from float64
// as the reference kernel rounds it.
func arithGrad[T tensor.Float](op arith, k int, a, b, y, gout, g []T, shape tensor.Shape, st [][]int) {
	switch {
	case op == arithAdd || (op == arithSub && k == 0):
		copy(g, gout)
	case op == arithSub:
		for i, v := range gout {
			g[i] = -v
		}
	case op == arithMul && k == 0:
		arithKernel(arithMul, gout, b, g, shape, [][]int{shape.Strides(), st[1]})
	case op == arithMul:
		arithKernel(arithMul, gout, a, g, shape, [][]int{shape.Strides(), st[0]})
	case k == 0: // div
		bcastRuns(shape, st, func(o int, offs, step []int, n int) {
			b, sb, g, gout := b[offs[1]:], step[1], g[o:o+n], gout[o:o+n]
			for i := range g {
				g[i] = gout[i] * T(1/float64(b[i*sb]))
			}
		})
	default:
		bcastRuns(shape, st, func(o int, offs, step []int, n int) {
			b, sb, g, gout, y := b[offs[1]:], step[1], g[o:o+n], gout[o:o+n], y[o:o+n]
			for i := range g {
				g[i] = gout[i] * T(-float64(y[i])/float64(b[i*sb]))
			}
		})
	}
}
