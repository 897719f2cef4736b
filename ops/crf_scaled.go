package ops

import (
	"math"
	"slices"

	"github.com/plumbml/plumb/internal/gemm"
)

// crfScaled is a batch's linear-chain CRF in scaled exp space (the scaling
// of Rabiner, "A tutorial on hidden Markov models", Proc. IEEE 1989, §V.A):
// each step's forward vector is kept normalised to sum 1 and the logs of
// the normalisers add up to log Z. A step is then a vector-matrix product
// with exp(transitions) and an elementwise product with exp(emissions), so
// the K² inner loop is a (float64 AVX2) GEMV instead of K² exponentials,
// and the transition gradient of the whole batch is one GEMM.
//
// The exponentials are shifted to stay in range: E[i, j] = exp(tr[i, j] −
// c_j) with c_j the column maximum (every column of E holds a 1), and
// phi[r, j] = exp(e[r, j] + c_j − m_r) with m_r the row maximum (the
// first row of a sequence takes start[j] + e[s, j] instead). A sequence
// whose normaliser still falls below normMin (all its mass on paths exp
// cannot reach from the step's best one) runs in log space instead
// (crfLogForward, crfLogMarginals).
type crfScaled struct {
	k                int
	offsets          []int
	e, tr, st, sp    []float64
	ex, exT, c, spx  []float64 // E [K, K], Eᵀ, the column shifts c, exp(sp − max sp)
	spMax            float64
	phi, alpha, beta []float64 // [total, K]
	norm             []float64 // [total]: the sum of step r's unnormalised forward vector
	logZ             []float64 // per sequence
	logSpace         []bool    // per sequence: ran in log space
}

// normMin is the smallest normaliser the scaled kernel accepts: far above
// float64's subnormals, so no step loses relative precision.
const normMin = 1e-250

func newCRFScaled(e, tr, st, sp []float64, k int, offsets []int) *crfScaled {
	total, b := len(e)/k, len(offsets)-1
	x := &crfScaled{k: k, offsets: offsets, e: e, tr: tr, st: st, sp: sp,
		ex: make([]float64, k*k), exT: make([]float64, k*k), c: make([]float64, k), spx: make([]float64, k),
		phi: make([]float64, total*k), alpha: make([]float64, total*k), norm: make([]float64, total),
		logZ: make([]float64, b), logSpace: make([]bool, b)}
	for j := range k {
		x.c[j] = tr[j]
		for i := 1; i < k; i++ {
			x.c[j] = max(x.c[j], tr[i*k+j])
		}
		for i := range k {
			v := math.Exp(tr[i*k+j] - x.c[j])
			x.ex[i*k+j], x.exT[j*k+i] = v, v
		}
	}
	x.spMax = slices.Max(sp)
	for j, v := range sp {
		x.spx[j] = math.Exp(v - x.spMax)
	}
	return x
}

// expShifted sets dst[j] = exp(v[j] − max v) and returns max v.
func expShifted(dst, v []float64) float64 {
	m := slices.Max(v)
	for j, x := range v {
		dst[j] = math.Exp(x - m)
	}
	return m
}

// normalize divides v by its sum and returns the sum, or false when the
// sum is below normMin or not finite.
func normalize(v []float64) (float64, bool) {
	s := 0.0
	for _, x := range v {
		s += x
	}
	if !(s >= normMin) || math.IsInf(s, 1) {
		return s, false
	}
	inv := 1 / s
	for j := range v {
		v[j] *= inv
	}
	return s, true
}

// forward runs sequence q's forward pass and sets its log Z, falling back
// to log space when the scaled pass leaves range. v is scratch [K].
func (x *crfScaled) forward(q int, v []float64) {
	k, s, end := x.k, x.offsets[q], x.offsets[q+1]
	if s == end {
		return
	}
	for j := range k {
		v[j] = x.st[j] + x.e[s*k+j]
	}
	logZ := expShifted(x.phi[s*k:(s+1)*k], v)
	a := x.alpha[s*k : (s+1)*k]
	copy(a, x.phi[s*k:(s+1)*k])
	n, ok := normalize(a)
	x.norm[s], logZ = n, logZ+math.Log(n)
	for r := s + 1; r < end && ok; r++ {
		for j := range k {
			v[j] = x.e[r*k+j] + x.c[j]
		}
		phi := x.phi[r*k : (r+1)*k]
		logZ += expShifted(phi, v)
		a = x.alpha[r*k : (r+1)*k]
		gemm.Serial(false, false, 1, k, k, 1, x.alpha[(r-1)*k:r*k], k, x.ex, k, 0, a, k)
		for j := range k {
			a[j] *= phi[j]
		}
		n, ok = normalize(a)
		x.norm[r], logZ = n, logZ+math.Log(n)
	}
	if ok {
		t := 0.0
		for j, p := range x.alpha[(end-1)*k : end*k] {
			t += p * x.spx[j]
		}
		ok = t >= normMin
		logZ += x.spMax + math.Log(t)
	}
	if !ok {
		x.logSpace[q] = true
		logZ = crfLogForward(x.e, x.tr, x.st, x.sp, k, s, end, x.alpha)
	}
	x.logZ[q] = logZ
}

// marginals writes g times sequence q's marginals into ge (rows [s, end):
// P(y_r = j)) and, for each step r > s, the row w[r] whose outer product
// with alpha[r−1], times E elementwise, is g·P(y_{r−1} = i, y_r = j):
// w[r, j] = g·phi[r, j]·beta[r, j] / (norm[r]·Σ_j alpha[r, j]·beta[r, j]).
// It returns false, writing nothing, when the scaled backward pass leaves
// range; the caller then runs the sequence in log space. v is scratch [K].
func (x *crfScaled) marginals(q int, g float64, ge, w, v []float64) bool {
	k, s, end := x.k, x.offsets[q], x.offsets[q+1]
	b := x.beta[(end-1)*k : end*k]
	copy(b, x.spx)
	if _, ok := normalize(b); !ok {
		return false
	}
	for r := end - 1; r > s; r-- {
		for j := range k {
			v[j] = x.phi[r*k+j] * x.beta[r*k+j]
		}
		b = x.beta[(r-1)*k : r*k]
		gemm.Serial(false, false, 1, k, k, 1, v, k, x.exT, k, 0, b, k)
		if _, ok := normalize(b); !ok {
			return false
		}
	}
	dots := make([]float64, end-s)
	for r := s; r < end; r++ {
		dots[r-s] = 0
		for j := range k {
			dots[r-s] += x.alpha[r*k+j] * x.beta[r*k+j]
		}
		if !(dots[r-s] >= normMin) {
			return false
		}
	}
	for r := s; r < end; r++ {
		p := g / dots[r-s]
		for j := range k {
			ge[r*k+j] = p * x.alpha[r*k+j] * x.beta[r*k+j]
		}
		if r > s {
			p /= x.norm[r]
			for j := range k {
				w[r*k+j] = p * x.phi[r*k+j] * x.beta[r*k+j]
			}
		}
	}
	return true
}
