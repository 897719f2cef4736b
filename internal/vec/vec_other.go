//go:build !amd64

package vec

// hasAVX is false off amd64: the Go loops run.
const hasAVX = false

func add32(dst, a, b *float32, n int) { panic("vec: no assembly on this architecture") }

func addConst32(dst *float32, v float32, n int) { panic("vec: no assembly on this architecture") }

func addRows32(dst *float32, ldd int, src *float32, lds int, rows, n int) {
	panic("vec: no assembly on this architecture")
}

func copyRows32(dst *float32, ldd int, src *float32, lds int, rows, n int) {
	panic("vec: no assembly on this architecture")
}

func relu32(dst, x *float32, n int) { panic("vec: no assembly on this architecture") }

func max32(x *float32, n int) float32 { panic("vec: no assembly on this architecture") }

func reluGrad32(dst, gr, x *float32, n int) { panic("vec: no assembly on this architecture") }

func adam32(p, grad, m, v *float32, n int, c *[5]float32, eps float32) {
	panic("vec: no assembly on this architecture")
}

func axpy32(dst, x *float32, a float32, n int) { panic("vec: no assembly on this architecture") }

func tanhScoreGrad32(dv, dq, dk, t, v *float32, e float32, n int) {
	panic("vec: no assembly on this architecture")
}

func adagrad32(p, grad, acc *float32, n int, lr, eps float32) {
	panic("vec: no assembly on this architecture")
}

func dot32(x, y *float32, n int) float32 { panic("vec: no assembly on this architecture") }

func axpyRows32(dst *float32, ldd int, x *float32, ldx int, rows, n int, a float32) {
	panic("vec: no assembly on this architecture")
}

func dotRows32(x *float32, ldx int, y *float32, ldy int, rows, n int) float32 {
	panic("vec: no assembly on this architecture")
}

func indexAbove32(x *float32, n int, t float32) int { panic("vec: no assembly on this architecture") }

func subMul32(dst, p *float32, d float32, n int) { panic("vec: no assembly on this architecture") }

func shift32(dst, src *float32, a, b float32, n int) { panic("vec: no assembly on this architecture") }
