package ops

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/tensor"
)

// Elementwise binary ops with NumPy broadcasting. They share one kernel and
// differ only in their scalar function and its partial derivatives, so they
// live in one table rather than one file each. Kernels compute in float64
// and round to the dtype, which for float32 is at least as accurate as TF.
type binaryFn struct {
	f  func(a, b float64) float64
	da func(a, b, y float64) float64 // ∂y/∂a
	db func(a, b, y float64) float64 // ∂y/∂b
}

var binaryFns = map[string]binaryFn{
	"add": {
		f:  func(a, b float64) float64 { return a + b },
		da: func(a, b, y float64) float64 { return 1 },
		db: func(a, b, y float64) float64 { return 1 },
	},
	"sub": {
		f:  func(a, b float64) float64 { return a - b },
		da: func(a, b, y float64) float64 { return 1 },
		db: func(a, b, y float64) float64 { return -1 },
	},
	"mul": {
		f:  func(a, b float64) float64 { return a * b },
		da: func(a, b, y float64) float64 { return b },
		db: func(a, b, y float64) float64 { return a },
	},
	"div": {
		f:  func(a, b float64) float64 { return a / b },
		da: func(a, b, y float64) float64 { return 1 / b },
		db: func(a, b, y float64) float64 { return -y / b },
	},
	// pow's ∂/∂b uses log(a) only where a > 0 and 0 elsewhere, as TF's _PowGrad.
	"pow": {
		f:  math.Pow,
		da: func(a, b, y float64) float64 { return b * math.Pow(a, b-1) },
		db: func(a, b, y float64) float64 {
			if a > 0 {
				return y * math.Log(a)
			}
			return 0
		},
	},
	// maximum/minimum send the gradient to a on ties (TF: a >= b resp. a <= b).
	"maximum": {
		f:  math.Max,
		da: func(a, b, y float64) float64 { return b2f(a >= b) },
		db: func(a, b, y float64) float64 { return b2f(a < b) },
	},
	"minimum": {
		f:  math.Min,
		da: func(a, b, y float64) float64 { return b2f(a <= b) },
		db: func(a, b, y float64) float64 { return b2f(a > b) },
	},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	for name := range binaryFns {
		register(Spec{Name: name, Inputs: []string{"a", "b"}, Grads: []int{0, 1},
			Make: MakeOp(func(NoAttrs) Op { return BinaryOp(name) }), CUDA: DeviceKernel})
	}
}

type binaryOp struct {
	name string
	fn   binaryFn
}

// BinaryOp returns the elementwise op name ("add", "sub", "mul", "div",
// "pow", "maximum", "minimum"); for another name, an op whose Forward
// returns an error naming it.
func BinaryOp(name string) Op {
	fn, ok := binaryFns[name]
	if !ok {
		return unknownOp{name, fmt.Errorf("ops: no binary op %q", name)}
	}
	return &binaryOp{name: name, fn: fn}
}

// Add returns a + b with broadcasting.
func Add(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("add"), a, b) }

// Sub returns a - b with broadcasting.
func Sub(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("sub"), a, b) }

// Mul returns a * b elementwise with broadcasting.
func Mul(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("mul"), a, b) }

// Div returns a / b elementwise with broadcasting.
func Div(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("div"), a, b) }

// Pow returns a ** b elementwise with broadcasting.
func Pow(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("pow"), a, b) }

// Maximum returns max(a, b) elementwise with broadcasting.
func Maximum(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("maximum"), a, b) }

// Minimum returns min(a, b) elementwise with broadcasting.
func Minimum(a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(BinaryOp("minimum"), a, b) }

func (o *binaryOp) Name() string { return o.name }

// Check is the binary ops' device-free check (Checker): one float dtype
// and shapes that broadcast.
func (o *binaryOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes(o.name, in, 2); err != nil {
		return err
	}
	if _, err := BroadcastShapes(in[0].Shape(), in[1].Shape()); err != nil {
		return Errorf(o.name, in, "%v", err)
	}
	return nil
}

func (o *binaryOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 2)
	if err != nil {
		return nil, err
	}
	shape, err := BroadcastShapes(in[0].Shape(), in[1].Shape())
	if err != nil {
		return nil, Errorf(o.name, in, "%v", err)
	}
	out := tensor.Empty(dt, shape...) // binaryKernel writes every element
	o.into(out, in, shape)
	return out, nil
}

// into runs the kernel on validated inputs into out, of the broadcast shape.
func (o *binaryOp) into(out *tensor.Tensor, in []*tensor.Tensor, shape tensor.Shape) {
	dt, op := out.DType(), arithOf(o.name)
	var st [][]int
	if op == notArith || in[0].Size() != out.Size() || in[1].Size() != out.Size() { // arithKernel reads no strides without broadcasting
		buf := scratch.Get[int](2 * len(shape))
		defer scratch.Put(buf)
		sa, sb := (*buf)[:len(shape)], (*buf)[len(shape):]
		st = [][]int{bcastStridesInto(sa, in[0].Shape(), shape), bcastStridesInto(sb, in[1].Shape(), shape)}
	}
	switch {
	case op != notArith && dt == tensor.Float32:
		arithKernel(op, in[0].Float32s(), in[1].Float32s(), out.Float32s(), shape, st)
	case op != notArith:
		arithKernel(op, in[0].Float64s(), in[1].Float64s(), out.Float64s(), shape, st)
	case dt == tensor.Float32:
		binaryKernel(in[0].Float32s(), in[1].Float32s(), out.Float32s(), shape, st, o.fn.f)
	case dt == tensor.Float64:
		binaryKernel(in[0].Float64s(), in[1].Float64s(), out.Float64s(), shape, st, o.fn.f)
	}
}

func binaryKernel[T tensor.Float](a, b, out []T, shape tensor.Shape, st [][]int, f func(a, b float64) float64) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		pa, sa, pb, sb := offs[0], step[0], offs[1], step[1]
		for i := 0; i < n; i++ {
			out[o+i] = T(f(float64(a[pa+i*sa]), float64(b[pb+i*sb])))
		}
	})
}

func (o *binaryOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	shape := out.Shape()
	st := [][]int{bcastStrides(in[0].Shape(), shape), bcastStrides(in[1].Shape(), shape)}
	for k, d := range []func(a, b, y float64) float64{o.fn.da, o.fn.db} {
		if !need[k] {
			continue
		}
		if o.name == "add" || o.name == "sub" { // ∂/∂a = 1, ∂/∂b = ±1: no per-element derivative to call
			grads[k] = addGrad(gout, in[k].Shape(), o.name == "sub" && k == 1)
			continue
		}
		g := tensor.Empty(out.DType(), out.Shape()...) // binaryGradKernel writes every element
		switch op := arithOf(o.name); {
		case op != notArith && out.DType() == tensor.Float32:
			arithGrad(op, k, in[0].Float32s(), in[1].Float32s(), out.Float32s(), gout.Float32s(), g.Float32s(), shape, st)
		case op != notArith:
			arithGrad(op, k, in[0].Float64s(), in[1].Float64s(), out.Float64s(), gout.Float64s(), g.Float64s(), shape, st)
		case out.DType() == tensor.Float32:
			binaryGradKernel(in[0].Float32s(), in[1].Float32s(), out.Float32s(), gout.Float32s(), g.Float32s(), shape, st, d)
		case out.DType() == tensor.Float64:
			binaryGradKernel(in[0].Float64s(), in[1].Float64s(), out.Float64s(), gout.Float64s(), g.Float64s(), shape, st, d)
		}
		grads[k] = sumTo(g, in[k].Shape())
	}
	return grads, nil
}

// binaryGradKernel writes g = gout * d(a, b, y) over the broadcast shape.
func binaryGradKernel[T tensor.Float](a, b, y, gout, g []T, shape tensor.Shape, st [][]int, d func(a, b, y float64) float64) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		pa, sa, pb, sb := offs[0], step[0], offs[1], step[1]
		for i := 0; i < n; i++ {
			g[o+i] = gout[o+i] * T(d(float64(a[pa+i*sa]), float64(b[pb+i*sb]), float64(y[o+i])))
		}
	})
}

// addGrad is add's and sub's gradient for an input of shape s: gout
// summed over the broadcast axes (sumTo), or a copy of it where nothing
// was broadcast, negated for sub's second input. It never returns gout
// itself: the tape recycles each gradient tensor once.
func addGrad(gout *tensor.Tensor, s tensor.Shape, negate bool) *tensor.Tensor {
	var g *tensor.Tensor
	if gout.Shape().Equal(s) {
		g = gout.Clone()
	} else {
		g = sumTo(gout, s)
	}
	if negate {
		switch d := g.Raw().(type) {
		case []float32:
			for i := range d {
				d[i] = -d[i]
			}
		case []float64:
			for i := range d {
				d[i] = -d[i]
			}
		}
	}
	return g
}
