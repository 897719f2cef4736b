//go:build !amd64

package vec

func sumF64x32(x *float32, n int) float64 { panic("vec: no assembly on this architecture") }

func sumSqDevF64x32(x *float32, n int, mu float64) float64 {
	panic("vec: no assembly on this architecture")
}

func sumProdDevF64x32(gr, x *float32, n int, mu float64) (sg, sgx float64) {
	panic("vec: no assembly on this architecture")
}

func affine32(y, x *float32, n int, mu, k, b float64) { panic("vec: no assembly on this architecture") }

func affineGrad32(dx, gr, x *float32, n int, mu, k, c0, c1 float64) {
	panic("vec: no assembly on this architecture")
}

func normScale32(y, x, gamma, beta *float32, n int, mu, inv float64) {
	panic("vec: no assembly on this architecture")
}

func normScaleGradSums32(gr, x, gamma *float32, sgamma, sbeta *float64, n int, mu, inv float64) (sg, sgx float64) {
	panic("vec: no assembly on this architecture")
}

func normScaleGrad32(dx, gr, x, gamma *float32, n int, mu, inv, a, b float64) {
	panic("vec: no assembly on this architecture")
}
