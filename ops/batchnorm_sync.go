package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// crossReplicaForward is batch norm in training with
// BatchNormAttrs.CrossReplica: the mean and the biased variance are those
// of every replica's x together, so each replica normalises as one process
// holding the whole batch would. Two sums cross the replicas, as in
// PyTorch's SyncBatchNorm: Σx with the element count, then Σ(x - mean)²
// (centred, in float64, like the local kernel, rather than Σx² - mean²).
// Every replica then updates the moving statistics with the same values.
func crossReplicaForward[T tensor.Float](o *batchNormOp, x, gamma, beta, rm, rv, y []T, n, c, hw int) error {
	a := o.a
	sums := make([]float64, c+1)
	channelSums(c, n, hw, func(ch int) float64 {
		s := 0.0
		for b := 0; b < n; b++ {
			s += vec.SumF64(x[(b*c+ch)*hw : (b*c+ch+1)*hw])
		}
		return s
	}, sums)
	sums[c] = float64(n * hw)
	if err := a.CrossReplica(sums); err != nil {
		return err
	}
	total := sums[c]
	for ch := range c {
		o.mean[ch] = sums[ch] / total
	}
	dev := sums[:c]
	channelSums(c, n, hw, func(ch int) float64 {
		s := 0.0
		for b := 0; b < n; b++ {
			s += vec.SumSqDevF64(x[(b*c+ch)*hw:(b*c+ch+1)*hw], o.mean[ch])
		}
		return s
	}, dev)
	if err := a.CrossReplica(dev); err != nil {
		return err
	}
	o.total = total
	for ch := range c {
		mu, v := o.mean[ch], dev[ch]/total
		rm[ch] = T(float64(rm[ch])*a.Momentum + mu*(1-a.Momentum))
		rv[ch] = T(float64(rv[ch])*a.Momentum + v*(1-a.Momentum))
		o.invStd[ch] = 1 / math.Sqrt(v+a.Epsilon)
	}
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				k, bt := float64(gamma[ch])*o.invStd[ch], float64(beta[ch])
				for b := 0; b < n; b++ {
					vec.Affine(y[(b*c+ch)*hw:(b*c+ch+1)*hw], x[(b*c+ch)*hw:], o.mean[ch], k, bt)
				}
			}
		}
	})
	return nil
}

// crossReplicaGrad is batch norm's gradient after crossReplicaForward.
// Data-parallel training averages the replicas' gradients weighted by
// their examples, w_r = m_r/M (m_r this replica's elements per channel, M
// all replicas'), each replica's loss being the mean over its own
// examples. The whole batch's gradient of x on replica r is then
// gamma·invStd·(w_r·dy - Σ_s w_s·Σdy_s/M - x̂·Σ_s w_s·Σ(dy·x̂)_s/M), and
// this replica returns it divided by w_r, so that the weighted average of
// the parameters' gradients upstream is the whole batch's. So the sums
// that cross the replicas are m_s·Σdy_s and m_s·Σ(dy·x̂)_s, and
//
//	dx = gamma·invStd·(dy - c0 - x̂·c1),  c0 = Σ_s m_s·Σdy_s/(m_r·M),  c1 likewise
//
// which is the one-process formula when there is one replica. dgamma and
// dbeta stay this replica's own sums: the averaging weighs them.
func crossReplicaGrad[T tensor.Float](o *batchNormOp, x, gamma, dy, dx, dgamma, dbeta []T, n, c, hw int) error {
	m := float64(n * hw)
	sums := make([]float64, 2*c)
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				sg, sgx := 0.0, 0.0
				for b := 0; b < n; b++ {
					lo := (b*c + ch) * hw
					s, sx := vec.SumProdDevF64(dy[lo:lo+hw], x[lo:], o.mean[ch])
					sg, sgx = sg+s, sgx+sx
				}
				sgx *= o.invStd[ch]
				if dgamma != nil {
					dgamma[ch] = T(sgx)
				}
				if dbeta != nil {
					dbeta[ch] = T(sg)
				}
				sums[ch], sums[c+ch] = m*sg, m*sgx
			}
		}
	})
	if err := o.a.CrossReplica(sums); err != nil || dx == nil { // every replica takes part in the sum
		return err
	}
	scale := 1 / (m * o.total)
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				mu, inv := o.mean[ch], o.invStd[ch]
				k, c0, c1 := float64(gamma[ch])*inv, sums[ch]*scale, inv*sums[c+ch]*scale
				for b := 0; b < n; b++ {
					lo := (b*c + ch) * hw
					vec.AffineGrad(dx[lo:lo+hw], dy[lo:], x[lo:], mu, k, c0, c1)
				}
			}
		}
	})
	return nil
}

// channelSums sets out[ch] = sum(ch) for each of c channels of n·hw
// elements, spread over the cores when the tensor is large.
func channelSums(c, n, hw int, sum func(ch int) float64, out []float64) {
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				out[ch] = sum(ch)
			}
		}
	})
}
