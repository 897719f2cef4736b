package ops

import (
	"math"
	"slices"
)

// crfLogForward runs the CRF forward algorithm in log space over the rows
// [s, end) of emissions e [total, K] (transitions tr [K, K], start st and
// stop sp [K]): alpha[r, j] = log Σ_i exp(alpha[r-1, i] + tr[i, j]) +
// e[r, j], written into alpha, and returns log Z. It takes K² exponentials
// per step, so the op runs it only for a sequence whose scaled exp-space
// pass (crfScaled) would leave float64's range; it is also the reference
// the tests hold the scaled kernel to.
func crfLogForward(e, tr, st, sp []float64, k, s, end int, alpha []float64) float64 {
	lse := make([]float64, k)
	for j := range k {
		alpha[s*k+j] = st[j] + e[s*k+j]
	}
	for r := s + 1; r < end; r++ {
		for j := range k {
			for i := range k {
				lse[i] = alpha[(r-1)*k+i] + tr[i*k+j]
			}
			alpha[r*k+j] = logSumExpOf(lse) + e[r*k+j]
		}
	}
	for j := range k {
		lse[j] = alpha[(end-1)*k+j] + sp[j]
	}
	return logSumExpOf(lse)
}

// crfLogMarginals runs the backward algorithm in log space over the rows
// [s, end) given crfLogForward's alpha and log Z, and adds g times the
// marginals: P(y_r = j) into ge[r, j] (overwriting that row) and
// Σ_r P(y_{r-1} = i, y_r = j) into gt[i, j]. beta is scratch [total, K].
func crfLogMarginals(e, tr, sp []float64, k, s, end int, alpha []float64, z, g float64, ge, gt, beta []float64) {
	lse := make([]float64, k)
	copy(beta[(end-1)*k:end*k], sp)
	for r := end - 2; r >= s; r-- {
		for i := range k {
			for j := range k {
				lse[j] = tr[i*k+j] + e[(r+1)*k+j] + beta[(r+1)*k+j]
			}
			beta[r*k+i] = logSumExpOf(lse)
		}
	}
	for r := s; r < end; r++ {
		for j := range k {
			ge[r*k+j] = g * math.Exp(alpha[r*k+j]+beta[r*k+j]-z)
			if r == s {
				continue
			}
			for i := range k {
				gt[i*k+j] += g * math.Exp(alpha[(r-1)*k+i]+tr[i*k+j]+e[r*k+j]+beta[r*k+j]-z)
			}
		}
	}
}

// logSumExpOf is log Σ exp(v), shifted by the maximum; -Inf for all -Inf.
func logSumExpOf(v []float64) float64 {
	m := slices.Max(v)
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
