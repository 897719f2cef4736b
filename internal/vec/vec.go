// Package vec holds the loops the kernels run over contiguous runs of
// memory, on plain slices: adding one run into another and a constant
// into a run, dot products and axpys, the normalisation sums, the
// float32 exponential, sigmoid and tanh (exp32.go, sigmoid32.go,
// tanh32.go), and the 2×2 max pool's windows (maxpool2x2.go). The Go
// compiler does not vectorise loops, so on amd64 the float32 forms run in
// assembly, eight lanes at a time, where CPUID says the CPU has the
// instructions (AVX, or AVX2 and FMA); other types and CPUs take the Go
// loops, which the tests check them against.
package vec

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// Add adds src into dst: dst[i] += src[i] for every i < len(src). dst must
// be at least as long as src.
func Add[T tensor.Float](dst, src []T) {
	Sum(dst, dst, src)
}

// ShiftTo sets dst[i] = (src[i] + a) + b for every i < len(src) in one
// pass, each addition rounded in turn, as two AddConst passes would
// (log-softmax's (x - max) - log Σ, whose first difference is exact near
// the maximum). dst must be at least as long as src; dst may be src.
func ShiftTo[T tensor.Float](dst, src []T, a, b T) {
	dst = dst[:len(src)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		shift32(&d[0], &any(src).([]float32)[0], any(a).(float32), any(b).(float32), done)
	}
	for i := done; i < len(src); i++ {
		dst[i] = (src[i] + a) + b
	}
}

// SubMul sets dst[i] = p[i]·(dst[i] − d) for every i < len(dst) (p at
// least as long), the difference rounded before the product: a softmax
// row's gradient from the upstream one, d being Σ dst∘p.
func SubMul[T tensor.Float](dst, p []T, d T) {
	p = p[:len(dst)]
	done := 0
	if x, ok := any(dst).([]float32); ok && hasAVX && len(x) >= 8 {
		done = len(x) &^ 7
		subMul32(&x[0], &any(p).([]float32)[0], any(d).(float32), done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] = p[i] * (dst[i] - d)
	}
}

// Sum sets dst[i] = a[i] + b[i] for every i < len(b) in one pass (a
// gradient's first two terms, without copying the first). dst and a must
// be at least as long as b; dst may be a.
func Sum[T tensor.Float](dst, a, b []T) {
	dst, a = dst[:len(b)], a[:len(b)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		add32(&d[0], &any(a).([]float32)[0], &any(b).([]float32)[0], done)
	}
	for i := done; i < len(b); i++ {
		dst[i] = a[i] + b[i]
	}
}

// AddConst adds v to every element of dst.
func AddConst[T tensor.Float](dst []T, v T) {
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		addConst32(&d[0], any(v).(float32), done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] += v
	}
}

// AddRows adds rows rows of n values from src into dst, row r of src
// (starting at r·lds) into row r of dst (starting at r·ldd), in row order,
// so the rows of dst may overlap: each row adds onto what the rows before
// it wrote (the adjoint of reading overlapping windows, as col2im is).
func AddRows[T tensor.Float](dst []T, ldd int, src []T, lds int, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	_, _ = dst[(rows-1)*ldd+n-1], src[(rows-1)*lds+n-1] // bounds, once
	if d, ok := any(dst).([]float32); ok && hasAVX {
		addRows32(&d[0], ldd, &any(src).([]float32)[0], lds, rows, n)
		return
	}
	for r := range rows {
		Add(dst[r*ldd:r*ldd+n], src[r*lds:r*lds+n])
	}
}

// CopyRows copies rows rows of n values from src into dst, row r of src
// (starting at r·lds) to row r of dst (starting at r·ldd), in row order;
// rows of src may overlap, rows of dst must not overlap src.
func CopyRows[T tensor.Float](dst []T, ldd int, src []T, lds int, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	_, _ = dst[(rows-1)*ldd+n-1], src[(rows-1)*lds+n-1] // bounds, once
	if d, ok := any(dst).([]float32); ok && hasAVX {
		copyRows32(&d[0], ldd, &any(src).([]float32)[0], lds, rows, n)
		return
	}
	for r := range rows {
		copy(dst[r*ldd:r*ldd+n], src[r*lds:r*lds+n])
	}
}

// Relu writes max(x, 0) into dst for each element of x (dst at least as
// long). NaN stays NaN, as with math.Max.
func Relu[T tensor.Float](dst, x []T) {
	dst = dst[:len(x)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		relu32(&d[0], &any(x).([]float32)[0], done)
	}
	for i := done; i < len(x); i++ {
		v := x[i]
		if v < 0 {
			v = 0
		}
		dst[i] = v
	}
}

// ReluGrad writes the gradient of Relu, g where x > 0 and 0 elsewhere
// (NaN x included), into dst: TF's ReluGrad, which selects rather than
// multiplies, so a NaN in g where x ≤ 0 does not pass.
func ReluGrad[T tensor.Float](dst, g, x []T) {
	dst, g = dst[:len(x)], g[:len(x)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		reluGrad32(&d[0], &any(g).([]float32)[0], &any(x).([]float32)[0], done)
	}
	for i := done; i < len(x); i++ {
		if x[i] > 0 {
			dst[i] = g[i]
		} else {
			dst[i] = 0
		}
	}
}

// Adam applies one Adam step (TF's ApplyAdam, epsilon-hat form) to
// parameters p with gradient g and moments m and v, all as long as g:
//
//	m = b1·m + (1−b1)·g
//	v = b2·v + (1−b2)·g·g
//	p −= lrT·m / (sqrt(v) + eps)
//
// each operation rounded in T in that order (the conversions keep the Go
// compiler from fusing a multiply and an add), so the AVX float32 loop
// and the Go one give the same bits.
func Adam[T tensor.Float](p, g, m, v []T, lrT, b1, b2, eps T) {
	p, m, v = p[:len(g)], m[:len(g)], v[:len(g)]
	done := 0
	if pf, ok := any(p).([]float32); ok && hasAVX && len(pf) >= 8 {
		done = len(pf) &^ 7
		c := [5]float32{any(lrT).(float32), any(b1).(float32), any(1 - b1).(float32), any(b2).(float32), any(1 - b2).(float32)}
		adam32(&pf[0], &any(g).([]float32)[0], &any(m).([]float32)[0], &any(v).([]float32)[0], done, &c, any(eps).(float32))
	}
	c1, c2 := 1-b1, 1-b2
	for i := done; i < len(g); i++ {
		gi := g[i]
		m[i] = T(b1*m[i]) + T(c1*gi)
		v[i] = T(b2*v[i]) + T(T(c2*gi)*gi)
		d := T(math.Sqrt(float64(v[i]))) + eps
		p[i] -= T(lrT*m[i]) / d
	}
}

// Adagrad is Keras' Adagrad update in place for parameters p with
// gradient g and accumulator a: a += g², p -= lr·g / sqrt(a + eps), each
// operation rounded in T in that order, so the AVX float32 loop and the Go
// one give the same bits (a float32 square root of a float64 root rounded
// to float32 is the correctly rounded float32 root, VSQRTPS's).
func Adagrad[T tensor.Float](p, g, a []T, lr, eps T) {
	p, a = p[:len(g)], a[:len(g)]
	done := 0
	if pf, ok := any(p).([]float32); ok && hasAVX && len(pf) >= 8 {
		done = len(pf) &^ 7
		adagrad32(&pf[0], &any(g).([]float32)[0], &any(a).([]float32)[0], done, any(lr).(float32), any(eps).(float32))
	}
	for i := done; i < len(g); i++ {
		gi := g[i]
		a[i] += T(gi * gi)
		p[i] -= T(lr*gi) / T(math.Sqrt(float64(a[i]+eps)))
	}
}

// Axpy adds a·x into dst: dst[i] += a·x[i] for every i < len(x), each
// product rounded before the add (no fused multiply-add), so the AVX
// float32 loop and the Go one give the same bits.
func Axpy[T tensor.Float](dst, x []T, a T) {
	dst = dst[:len(x)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		axpy32(&d[0], &any(x).([]float32)[0], any(a).(float32), done)
	}
	for i := done; i < len(x); i++ {
		dst[i] += T(a * x[i])
	}
}

// TanhScoreGrad adds one key's share of an additive attention score's
// gradient (Bahdanau et al. 2015: score = v·tanh(q + k)): with t =
// tanh(q + k) for that key and e the score's gradient, it adds e·t into
// dv and g = e·v·(1 − t²) into both dq and dk, for every i < len(t) (the
// others at least as long). Each operation is rounded in turn (no fused
// multiply-add), so the AVX float32 loop and the Go one give the same
// bits.
func TanhScoreGrad[T tensor.Float](dv, dq, dk, t, v []T, e T) {
	n := len(t)
	dv, dq, dk, v = dv[:n], dq[:n], dk[:n], v[:n]
	done := 0
	if tf, ok := any(t).([]float32); ok && hasAVX && n >= 8 {
		done = n &^ 7
		tanhScoreGrad32(&any(dv).([]float32)[0], &any(dq).([]float32)[0], &any(dk).([]float32)[0], &tf[0],
			&any(v).([]float32)[0], any(e).(float32), done)
	}
	for i := done; i < n; i++ {
		x := t[i]
		dv[i] += T(e * x)
		g := T(T(e*v[i]) * T(1-T(x*x)))
		dq[i] += g
		dk[i] += g
	}
}

// Max returns the largest element of x, or NaN if x holds a NaN; x must
// not be empty. float32 runs eight lanes at a time with AVX.
func Max[T tensor.Float](x []T) T {
	m := x[0]
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 8 {
		done = len(xf) &^ 7
		m = any(max32(&xf[0], done)).(T)
	}
	for _, v := range x[done:] {
		m = max(m, v) // the builtin keeps NaN
	}
	return m
}

// Dot returns Σ x[i]·y[i] over i < len(x) (y at least as long). The AVX
// float32 loop keeps eight running sums and adds them at the end, so its
// rounding differs from a sequential sum's (within the usual n·ε·Σ|x·y|).
func Dot[T tensor.Float](x, y []T) T {
	y = y[:len(x)]
	var s T
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 8 {
		done = len(xf) &^ 7
		s = any(dot32(&xf[0], &any(y).([]float32)[0], done)).(T)
	}
	for i := done; i < len(x); i++ {
		s += x[i] * y[i]
	}
	return s
}

// AxpyRows adds a·x into dst over rows rows of n values, row r of x
// starting at r·ldx and of dst at r·ldd (rows of dst must not overlap):
// Axpy row by row in one call, for kernels whose rows are short.
func AxpyRows[T tensor.Float](dst []T, ldd int, x []T, ldx int, rows, n int, a T) {
	if rows <= 0 || n <= 0 {
		return
	}
	_, _ = dst[(rows-1)*ldd+n-1], x[(rows-1)*ldx+n-1] // bounds, once
	if d, ok := any(dst).([]float32); ok && hasAVX {
		axpyRows32(&d[0], ldd, &any(x).([]float32)[0], ldx, rows, n, any(a).(float32))
		return
	}
	for r := range rows {
		Axpy(dst[r*ldd:r*ldd+n], x[r*ldx:r*ldx+n], a)
	}
}

// DotRows returns Σ x·y over rows rows of n values, row r of x starting
// at r·ldx and of y at r·ldy; the AVX float32 loop keeps eight running
// sums across all rows, so its rounding differs from a sequential sum's.
func DotRows[T tensor.Float](x []T, ldx int, y []T, ldy int, rows, n int) T {
	if rows <= 0 || n <= 0 {
		return 0
	}
	_, _ = x[(rows-1)*ldx+n-1], y[(rows-1)*ldy+n-1] // bounds, once
	if xf, ok := any(x).([]float32); ok && hasAVX {
		return any(dotRows32(&xf[0], ldx, &any(y).([]float32)[0], ldy, rows, n)).(T)
	}
	var s T
	for r := range rows {
		s += Dot(x[r*ldx:r*ldx+n], y[r*ldy:r*ldy+n])
	}
	return s
}

// IndexAbove returns the first index i with x[i] > t, or len(x) when there
// is none; NaN is never above t, and nothing is above a NaN t. It skips
// the elements that cannot enter a running top-k eight at a time.
func IndexAbove[T tensor.Float](x []T, t T) int {
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 8 {
		done = len(xf) &^ 7
		if i := indexAbove32(&xf[0], done, any(t).(float32)); i < done {
			return i
		}
	}
	for i := done; i < len(x); i++ {
		if x[i] > t {
			return i
		}
	}
	return len(x)
}
