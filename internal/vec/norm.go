package vec

import "github.com/plumbml/plumb/tensor"

// The loops of the normalisation kernels (batch and layer norm): sums in
// float64 over float32 or float64 runs, and affine maps computed in
// float64 and rounded once to the element type, so that a float32 tensor
// is normalised as accurately as the float64 reference computes it. On
// amd64 with AVX the float32 forms convert four values at a time to
// float64 lanes (norm_amd64.s); the maps do each float64 operation the Go
// loop does, in its order and without fusing, so both give the same bits.
// The sums keep more running sums than the Go loops' four, so their
// rounding differs within the usual n·ε·Σ|terms|.

// SumF64 returns Σ x in float64.
func SumF64[T tensor.Float](x []T) float64 {
	var s float64
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 16 {
		done = len(xf) &^ 15
		s = sumF64x32(&xf[0], done)
	}
	var s0, s1, s2, s3 float64
	i := done
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
	}
	for _, v := range x[i:] {
		s0 += float64(v)
	}
	return s + ((s0 + s1) + (s2 + s3))
}

// SumSqDevF64 returns Σ (x − mu)² in float64.
func SumSqDevF64[T tensor.Float](x []T, mu float64) float64 {
	var s float64
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 16 {
		done = len(xf) &^ 15
		s = sumSqDevF64x32(&xf[0], done, mu)
	}
	var s0, s1, s2, s3 float64
	i := done
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		d0, d1, d2, d3 := float64(v[0])-mu, float64(v[1])-mu, float64(v[2])-mu, float64(v[3])-mu
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for _, v := range x[i:] {
		d := float64(v) - mu
		s0 += d * d
	}
	return s + ((s0 + s1) + (s2 + s3))
}

// SumProdDevF64 returns Σ g and Σ g·(x − mu) in float64 over i < len(g)
// (x at least as long).
func SumProdDevF64[T tensor.Float](g, x []T, mu float64) (sg, sgx float64) {
	x = x[:len(g)]
	done := 0
	if gf, ok := any(g).([]float32); ok && hasAVX && len(gf) >= 8 {
		done = len(gf) &^ 7
		sg, sgx = sumProdDevF64x32(&gf[0], &any(x).([]float32)[0], done, mu)
	}
	for i := done; i < len(g); i++ {
		v := float64(g[i])
		sg += v
		sgx += v * (float64(x[i]) - mu)
	}
	return sg, sgx
}

// Affine writes y[i] = (x[i] − mu)·k + b, computed in float64, for every
// i < len(y) (x at least as long): batch norm's output with its
// per-channel constants.
func Affine[T tensor.Float](y, x []T, mu, k, b float64) {
	x = x[:len(y)]
	done := 0
	if yf, ok := any(y).([]float32); ok && hasAVX && len(yf) >= 8 {
		done = len(yf) &^ 7
		affine32(&yf[0], &any(x).([]float32)[0], done, mu, k, b)
	}
	for i := done; i < len(y); i++ {
		y[i] = T((float64(x[i])-mu)*k + b)
	}
}

// AffineGrad writes dx[i] = k·(g[i] − c0 − c1·(x[i] − mu)), computed in
// float64, for every i < len(dx) (g and x at least as long): batch norm's
// data gradient with its per-channel constants.
func AffineGrad[T tensor.Float](dx, g, x []T, mu, k, c0, c1 float64) {
	g, x = g[:len(dx)], x[:len(dx)]
	done := 0
	if df, ok := any(dx).([]float32); ok && hasAVX && len(df) >= 8 {
		done = len(df) &^ 7
		affineGrad32(&df[0], &any(g).([]float32)[0], &any(x).([]float32)[0], done, mu, k, c0, c1)
	}
	for i := done; i < len(dx); i++ {
		dx[i] = T(k * (float64(g[i]) - c0 - c1*(float64(x[i])-mu)))
	}
}

// NormScale writes y[i] = gamma[i]·((x[i] − mu)·inv) + beta[i], computed
// in float64, for every i < len(y) (x, gamma and beta at least as long):
// layer norm's output for one row.
func NormScale[T tensor.Float](y, x, gamma, beta []T, mu, inv float64) {
	x, gamma, beta = x[:len(y)], gamma[:len(y)], beta[:len(y)]
	done := 0
	if yf, ok := any(y).([]float32); ok && hasAVX && len(yf) >= 8 {
		done = len(yf) &^ 7
		normScale32(&yf[0], &any(x).([]float32)[0], &any(gamma).([]float32)[0], &any(beta).([]float32)[0], done, mu, inv)
	}
	for i := done; i < len(y); i++ {
		y[i] = T(float64(gamma[i])*((float64(x[i])-mu)*inv) + float64(beta[i]))
	}
}

// NormScaleGradSums adds, for i < len(g) (x and gamma at least as long,
// sgamma and sbeta too), with x̂ = (x[i] − mu)·inv computed in float64,
//
//	sgamma[i] += g[i]·x̂,  sbeta[i] += g[i]
//
// and returns Σ g·gamma and Σ g·gamma·x̂: layer norm's gradient sums for
// one row.
func NormScaleGradSums[T tensor.Float](g, x, gamma []T, sgamma, sbeta []float64, mu, inv float64) (sg, sgx float64) {
	x, gamma, sgamma, sbeta = x[:len(g)], gamma[:len(g)], sgamma[:len(g)], sbeta[:len(g)]
	done := 0
	if gf, ok := any(g).([]float32); ok && hasAVX && len(gf) >= 8 {
		done = len(gf) &^ 7
		sg, sgx = normScaleGradSums32(&gf[0], &any(x).([]float32)[0], &any(gamma).([]float32)[0], &sgamma[0], &sbeta[0], done, mu, inv)
	}
	for i := done; i < len(g); i++ {
		xh := (float64(x[i]) - mu) * inv
		v := float64(g[i])
		gg := v * float64(gamma[i])
		sg += gg
		sgx += gg * xh
		sgamma[i] += v * xh
		sbeta[i] += v
	}
	return sg, sgx
}

// NormScaleGrad writes dx[i] = inv·(g[i]·gamma[i] − a − x̂·b), x̂ = (x[i] −
// mu)·inv, computed in float64, for every i < len(dx) (g, x and gamma at
// least as long): layer norm's data gradient for one row.
func NormScaleGrad[T tensor.Float](dx, g, x, gamma []T, mu, inv, a, b float64) {
	g, x, gamma = g[:len(dx)], x[:len(dx)], gamma[:len(dx)]
	done := 0
	if df, ok := any(dx).([]float32); ok && hasAVX && len(df) >= 8 {
		done = len(df) &^ 7
		normScaleGrad32(&df[0], &any(g).([]float32)[0], &any(x).([]float32)[0], &any(gamma).([]float32)[0], done, mu, inv, a, b)
	}
	for i := done; i < len(dx); i++ {
		xh := (float64(x[i]) - mu) * inv
		dx[i] = T(inv * (float64(g[i])*float64(gamma[i]) - a - xh*b))
	}
}
