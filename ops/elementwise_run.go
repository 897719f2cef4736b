package ops

import "github.com/plumbml/plumb/tensor"

// ElementwiseArity returns 1 for an elementwise unary op (the table of
// unary.go: activations and math functions), 2 for an elementwise binary
// op (binary.go: add, sub, mul, div, pow, maximum, minimum) and 0 for any
// other op. A compiled inference plan (package infer) fuses chains of
// these into one loop with UnaryRun and BinaryRun.
func ElementwiseArity(op Op) int {
	switch op.(type) {
	case *unaryOp:
		return 1
	case *binaryOp:
		return 2
	}
	return 0
}

// UnaryRun writes y = f(x) for the elementwise unary op on one run of
// elements with the kernel its Forward runs on each chunk, so a fused loop
// gets Forward's bits; y may be x. It reports false, writing nothing, when
// op is not an elementwise unary op.
func UnaryRun[T tensor.Float](op Op, y, x []T) bool {
	o, ok := op.(*unaryOp)
	if ok {
		unaryChunk(o, x[:len(y)], y)
	}
	return ok
}

// BinaryRun writes out[i] = a[i·sa] op b[i·sb] for the elementwise binary
// op, each stride 1 (the operand moves along the run) or 0 (it is held: a
// broadcast axis), with the loops its Forward runs (the arithmetic ops in
// the dtype, the others through float64), so a fused loop gets Forward's
// bits; out may be a or b. It reports false, writing nothing, when op is
// not an elementwise binary op.
func BinaryRun[T tensor.Float](op Op, out, a []T, sa int, b []T, sb int) bool {
	o, ok := op.(*binaryOp)
	switch {
	case !ok:
	case arithOf(o.name) != notArith:
		arithRun(arithOf(o.name), out, a, sa, b, sb)
	default:
		for i := range out {
			out[i] = T(o.fn.f(float64(a[i*sa]), float64(b[i*sb])))
		}
	}
	return ok
}
