package ops

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// The kernels of softmax, log-softmax, softmax cross-entropy, layer norm
// and batch norm as they were before the fused rewrite: one element at a
// time through strided indices (softmax) or whole-tensor loops, exps
// through math.Exp in float64, on one core. They are the reference the
// fused kernels are tested against (fused_test.go) and the "plain" side of
// BenchmarkFusedKernels.

// refLogSumExp returns the row maximum m and log Σ exp(x - m) over the n
// elements x[base], x[base+stride], ..., in float64.
func refLogSumExp[T tensor.Float](x []T, base, n, stride int) (m, ls float64) {
	m = math.Inf(-1)
	for k := 0; k < n; k++ {
		m = math.Max(m, float64(x[base+k*stride]))
	}
	s := 0.0
	for k := 0; k < n; k++ {
		s += math.Exp(float64(x[base+k*stride]) - m)
	}
	return m, math.Log(s)
}

// refSoftmaxKernel writes softmax, or with log the log-softmax
// shifted - log Σ exp(shifted) where shifted = x - max, of x along the
// middle axis of [outer, n, inner] into y.
func refSoftmaxKernel[T tensor.Float](x, y []T, outer, n, inner int, log bool) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			m, ls := refLogSumExp(x, base, n, inner)
			for k := 0; k < n; k++ {
				j := base + k*inner
				if log {
					y[j] = T(float64(x[j]) - m - ls)
				} else {
					y[j] = T(math.Exp(float64(x[j]) - m - ls))
				}
			}
		}
	}
}

// refSoftmaxGrad writes dx for output y and upstream gradient dy along the
// middle axis of [outer, n, inner]: y·(dy - Σ dy·y) for softmax and
// dy - exp(y)·Σ dy for log_softmax.
func refSoftmaxGrad[T tensor.Float](name string, y, dy, dx []T, outer, n, inner int) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			s := 0.0
			for k := 0; k < n; k++ {
				j := base + k*inner
				if name == "softmax" {
					s += float64(dy[j]) * float64(y[j])
				} else {
					s += float64(dy[j])
				}
			}
			for k := 0; k < n; k++ {
				j := base + k*inner
				if name == "softmax" {
					dx[j] = T(float64(y[j]) * (float64(dy[j]) - s))
				} else {
					dx[j] = T(float64(dy[j]) - math.Exp(float64(y[j]))*s)
				}
			}
		}
	}
}

// refXentKernel writes each row's max and shifted log-sum-exp into rowMax and
// logSum and its loss into loss, from soft labels y when y is non-nil and
// from integer labels otherwise.
func refXentKernel[T tensor.Float](z, y []T, labels []int, n, c int, rowMax, logSum, loss []float64) {
	for i := 0; i < n; i++ {
		m, ls := refLogSumExp(z, i*c, c, 1)
		rowMax[i], logSum[i] = m, ls
		if y == nil {
			loss[i] = negLogSoftmax(m, ls, z[i*c+labels[i]])
			continue
		}
		for j := i * c; j < (i+1)*c; j++ {
			loss[i] += float64(y[j]) * negLogSoftmax(m, ls, z[j])
		}
	}
}

// refXentGrad writes, for row weights w (the upstream gradient of each loss),
// dz = w·(p·Σy - y) with p = softmax(z) and y the soft labels or the
// one-hot of the integer labels, and for soft labels dy = w·(-log p);
// a nil dz or dy is not wanted.
func refXentGrad[T tensor.Float](z, y []T, labels []int, n, c int, rowMax, logSum, w []float64, dz, dy []T) {
	for i := 0; i < n; i++ {
		mass := 1.0
		if y != nil {
			mass = 0
			for _, v := range y[i*c : (i+1)*c] {
				mass += float64(v)
			}
		}
		for j := i * c; j < (i+1)*c; j++ {
			if dz != nil {
				d := math.Exp(-negLogSoftmax(rowMax[i], logSum[i], z[j])) * mass
				switch {
				case y != nil:
					d -= float64(y[j])
				case j-i*c == labels[i]:
					d--
				}
				dz[j] = T(w[i] * d)
			}
			if dy != nil {
				dy[j] = T(w[i] * negLogSoftmax(rowMax[i], logSum[i], z[j]))
			}
		}
	}
}

// refLayerNormKernel normalises each row of d elements of x into y, saving
// its mean and inverse std (two passes, in float64).
func refLayerNormKernel[T tensor.Float](x, gamma, beta, y []T, d int, eps float64, mean, invStd []float64) {
	for r := range mean {
		row := x[r*d : (r+1)*d]
		mu, v := 0.0, 0.0
		for _, e := range row {
			mu += float64(e)
		}
		mu /= float64(d)
		for _, e := range row {
			v += (float64(e) - mu) * (float64(e) - mu)
		}
		v /= float64(d)
		mean[r], invStd[r] = mu, 1/math.Sqrt(v+eps)
		for j, e := range row {
			y[r*d+j] = T(float64(gamma[j])*(float64(e)-mu)*invStd[r] + float64(beta[j]))
		}
	}
}

// refLayerNormGrad writes, per row with x̂ = (x - mean)·invStd and
// g = dy·gamma,
//
//	dx = invStd·(g - Σg/d - x̂·Σ(g·x̂)/d),  dgamma = Σ_rows dy·x̂,  dbeta = Σ_rows dy
//
// accumulating in float64; a nil output is not wanted.
func refLayerNormGrad[T tensor.Float](x, gamma, dy, dx, dgamma, dbeta []T, d int, mean, invStd []float64) {
	sgamma, sbeta := make([]float64, d), make([]float64, d)
	for r := range mean {
		lo := r * d
		sg, sgx := 0.0, 0.0
		for j := 0; j < d; j++ {
			xh := (float64(x[lo+j]) - mean[r]) * invStd[r]
			g := float64(dy[lo+j])
			sg += g * float64(gamma[j])
			sgx += g * float64(gamma[j]) * xh
			sgamma[j] += g * xh
			sbeta[j] += g
		}
		if dx == nil {
			continue
		}
		for j := 0; j < d; j++ {
			xh := (float64(x[lo+j]) - mean[r]) * invStd[r]
			g := float64(dy[lo+j]) * float64(gamma[j])
			dx[lo+j] = T(invStd[r] * (g - sg/float64(d) - xh*sgx/float64(d)))
		}
	}
	for j := 0; j < d; j++ {
		if dgamma != nil {
			dgamma[j] = T(sgamma[j])
		}
		if dbeta != nil {
			dbeta[j] = T(sbeta[j])
		}
	}
}

// refBatchNormKernel normalises x [n, c, hw] per channel into y, saving each
// channel's mean and inverse std; in training it takes the batch
// statistics (two passes, in float64) and updates the moving ones rm, rv.
func refBatchNormKernel[T tensor.Float](x, gamma, beta, rm, rv, y []T, n, c, hw int, a BatchNormAttrs, mean, invStd []float64) {
	m := float64(n * hw)
	for ch := 0; ch < c; ch++ {
		mu, v := float64(rm[ch]), float64(rv[ch])
		if a.Training {
			mu, v = 0, 0
			for b := 0; b < n; b++ {
				for _, e := range x[(b*c+ch)*hw : (b*c+ch+1)*hw] {
					mu += float64(e)
				}
			}
			mu /= m
			for b := 0; b < n; b++ {
				for _, e := range x[(b*c+ch)*hw : (b*c+ch+1)*hw] {
					v += (float64(e) - mu) * (float64(e) - mu)
				}
			}
			v /= m
			rm[ch] = T(float64(rm[ch])*a.Momentum + mu*(1-a.Momentum))
			rv[ch] = T(float64(rv[ch])*a.Momentum + v*(1-a.Momentum))
		}
		mean[ch], invStd[ch] = mu, 1/math.Sqrt(v+a.Epsilon)
		g, bt := float64(gamma[ch]), float64(beta[ch])
		for b := 0; b < n; b++ {
			lo := (b*c + ch) * hw
			for j := lo; j < lo+hw; j++ {
				y[j] = T(g*(float64(x[j])-mu)*invStd[ch] + bt)
			}
		}
	}
}

// refBatchNormGrad writes, per channel with x̂ = (x - mean)·invStd and m its
// element count, dgamma = Σ dy·x̂, dbeta = Σ dy and
//
//	dx = gamma·invStd·(dy - dbeta/m - x̂·dgamma/m)   (training)
//	dx = gamma·invStd·dy                           (inference)
//
// (TF's FusedBatchNormGrad); a nil output is not wanted.
func refBatchNormGrad[T tensor.Float](x, gamma, dy, dx, dgamma, dbeta []T, n, c, hw int, training bool, mean, invStd []float64) {
	m := float64(n * hw)
	for ch := 0; ch < c; ch++ {
		sg, sgx := 0.0, 0.0
		for b := 0; b < n; b++ {
			lo := (b*c + ch) * hw
			for j := lo; j < lo+hw; j++ {
				sg += float64(dy[j])
				sgx += float64(dy[j]) * (float64(x[j]) - mean[ch]) * invStd[ch]
			}
		}
		if dgamma != nil {
			dgamma[ch] = T(sgx)
		}
		if dbeta != nil {
			dbeta[ch] = T(sg)
		}
		if dx == nil {
			continue
		}
		k := float64(gamma[ch]) * invStd[ch]
		for b := 0; b < n; b++ {
			lo := (b*c + ch) * hw
			for j := lo; j < lo+hw; j++ {
				d := float64(dy[j])
				if training {
					d -= (sg + (float64(x[j])-mean[ch])*invStd[ch]*sgx) / m
				}
				dx[j] = T(k * d)
			}
		}
	}
}
