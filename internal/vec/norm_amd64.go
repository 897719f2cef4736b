package vec

// sumF64x32 returns Σ x in float64 over n float32 values (n a multiple of
// 16).
//
//go:noescape
func sumF64x32(x *float32, n int) float64

// sumSqDevF64x32 returns Σ (x − mu)² in float64 over n float32 values (n a
// multiple of 16).
//
//go:noescape
func sumSqDevF64x32(x *float32, n int, mu float64) float64

// sumProdDevF64x32 returns Σ gr and Σ gr·(x − mu) in float64 over n float32
// values (n a multiple of 8).
//
//go:noescape
func sumProdDevF64x32(gr, x *float32, n int, mu float64) (sg, sgx float64)

// affine32 is Affine for n float32 values (n a multiple of 8).
//
//go:noescape
func affine32(y, x *float32, n int, mu, k, b float64)

// affineGrad32 is AffineGrad for n float32 values (n a multiple of 8).
//
//go:noescape
func affineGrad32(dx, gr, x *float32, n int, mu, k, c0, c1 float64)

// normScale32 is NormScale for n float32 values (n a multiple of 8).
//
//go:noescape
func normScale32(y, x, gamma, beta *float32, n int, mu, inv float64)

// normScaleGradSums32 is NormScaleGradSums for n float32 values (n a
// multiple of 8).
//
//go:noescape
func normScaleGradSums32(gr, x, gamma *float32, sgamma, sbeta *float64, n int, mu, inv float64) (sg, sgx float64)

// normScaleGrad32 is NormScaleGrad for n float32 values (n a multiple of
// 8).
//
//go:noescape
func normScaleGrad32(dx, gr, x, gamma *float32, n int, mu, inv, a, b float64)
