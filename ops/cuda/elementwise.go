//go:build cuda

package cuda

import (
	"slices"
)

// unaryCodes and binaryCodes number the ops as the Unary and Binary enums
// of kernels/elementwise.cu do.
var (
	unaryCodes = opCodes("neg", "exp", "log", "sqrt", "rsqrt", "square", "abs", "clip", "relu", "relu6",
		"leaky_relu", "elu", "gelu", "gelu_tanh", "sigmoid", "tanh", "softplus", "swish")
	binaryCodes = opCodes("add", "sub", "mul", "div", "pow", "maximum", "minimum")
)

func opCodes(names ...string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}

// unaryParams returns the op's code and its scalar attributes p (alpha for
// leaky_relu and elu, lo and hi for clip), as ops.UnaryOp takes them.
func unaryParams(name string, in []*Buffer, p []float64) (int, [2]float64, error) {
	var attrs [2]float64
	code, ok := unaryCodes[name]
	if !ok {
		return 0, attrs, opError(name, in, "no CUDA kernel for unary op %q", name)
	}
	copy(attrs[:], p)
	if name == "clip" && attrs[0] > attrs[1] {
		return 0, attrs, opError(name, in, "lo %v > hi %v", attrs[0], attrs[1])
	}
	return code, attrs, nil
}

// unaryFwd returns the elementwise op name of ops/unary.go ("relu", "exp",
// ...) applied to x, with the scalar attributes p of ops.UnaryOp.
func (d *Device) unaryFwd(name string, x *Buffer, p ...float64) (*Buffer, error) {
	in := []*Buffer{x}
	code, attrs, err := unaryParams(name, in, p)
	if err != nil {
		return nil, err
	}
	if err := d.checkInputs(name, in...); err != nil {
		return nil, err
	}
	var y *Buffer
	err = d.do(func() error {
		var err error
		if y, err = d.newBuffer(x.dtype, x.shape); err != nil || x.Size() == 0 {
			return err
		}
		n := x.Size()
		return d.launch("unary_fwd", grid1(n), block1, i64(code), ptr(x), ptr(y), i64(n), f64(attrs[0]), f64(attrs[1]))
	})
	return done(y, err)
}

// unaryBwd returns dx = dy·f'(x) for the unary op name, from its input x,
// its output y and the upstream gradient dy, all of one shape.
func (d *Device) unaryBwd(name string, x, y, dy *Buffer, p ...float64) (*Buffer, error) {
	in := []*Buffer{x, y, dy}
	code, attrs, err := unaryParams(name, in, p)
	if err != nil {
		return nil, err
	}
	if err := d.checkInputs(name, in...); err != nil {
		return nil, err
	}
	var dx *Buffer
	err = d.do(func() error {
		var err error
		if dx, err = d.newBuffer(x.dtype, x.shape); err != nil || x.Size() == 0 {
			return err
		}
		n := x.Size()
		return d.launch("unary_bwd", grid1(n), block1, i64(code), ptr(x), ptr(y), ptr(dy), ptr(dx), i64(n), f64(attrs[0]), f64(attrs[1]))
	})
	return done(dx, err)
}

// binaryShapes checks the binary op's operands: b of a's shape, or of a's
// trailing dims (a bias row repeated over a's leading dims; the part of
// NumPy broadcasting that layers need). It returns the op's code.
func binaryShapes(name string, a, b *Buffer) (int, error) {
	code, ok := binaryCodes[name]
	if !ok {
		return 0, opError(name, []*Buffer{a, b}, "no CUDA kernel for binary op %q", name)
	}
	as, bs := a.shape, b.shape
	if len(bs) > len(as) || !slices.Equal(as[len(as)-len(bs):], bs) {
		return 0, opError(name, []*Buffer{a, b}, "the CUDA kernel takes b of a's shape or of its trailing dims %v", as)
	}
	return code, nil
}

// binaryFwd returns the elementwise op name of ops/binary.go ("add", "mul",
// ...) of a and b, where b has a's shape or its trailing dims.
func (d *Device) binaryFwd(name string, a, b *Buffer) (*Buffer, error) {
	if err := d.checkInputs(name, a, b); err != nil {
		return nil, err
	}
	code, err := binaryShapes(name, a, b)
	if err != nil {
		return nil, err
	}
	var y *Buffer
	err = d.do(func() error {
		var err error
		if y, err = d.newBuffer(a.dtype, a.shape); err != nil || a.Size() == 0 || b.Size() == 0 {
			return err
		}
		n := a.Size()
		return d.launch("binary_fwd", grid1(n), block1, i64(code), ptr(a), ptr(b), ptr(y), i64(n), i64(b.Size()))
	})
	return done(y, err)
}

// binaryBwd returns the gradients of the binary op name for the inputs
// the need flags ask for (nil for the others), from its inputs a and b,
// its output y and the upstream gradient dy. A broadcast b's gradient is
// summed over a's leading dims.
func (d *Device) binaryBwd(name string, a, b, y, dy *Buffer, needA, needB bool) (da, db *Buffer, err error) {
	in := []*Buffer{a, b, y, dy}
	if err := d.checkInputs(name, in...); err != nil {
		return nil, nil, err
	}
	code, err := binaryShapes(name, a, b)
	if err != nil {
		return nil, nil, err
	}
	n, nb := a.Size(), b.Size()
	err = d.do(func() error {
		var err error
		if needA {
			if da, err = d.newBuffer(a.dtype, a.shape); err != nil {
				return err
			}
		}
		// The kernel writes b's gradient over a's shape; a broadcast b
		// needs a scratch buffer folded by channel_sum.
		var dbFull *Buffer
		if needB {
			if db, err = d.newBuffer(b.dtype, b.shape); err != nil {
				return err
			}
			dbFull = db
			if nb != n {
				if dbFull, err = d.newBuffer(b.dtype, a.shape); err != nil {
					return err
				}
				defer dbFull.Free()
			}
		}
		if n == 0 && db != nil {
			return d.zero(db) // an empty a leaves a non-empty b's gradient 0
		}
		if n == 0 || !(needA || needB) {
			return nil
		}
		if err := d.launch("binary_bwd", grid1(n), block1, i64(code), ptr(a), ptr(b), ptr(y), ptr(dy),
			ptr(da), ptr(dbFull), i64(n), i64(nb)); err != nil {
			return err
		}
		if needB && nb != n {
			return d.colSum(dbFull, n/nb, nb, db)
		}
		return nil
	})
	if err != nil {
		freeAll(da, db)
		return nil, nil, err
	}
	return da, db, nil
}
