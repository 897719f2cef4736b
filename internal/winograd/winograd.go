// Package winograd holds the transforms of the minimal filtering algorithm
// F(2×2, 3×3) of Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks" (CVPR 2016), §4.1: a 3×3 stride-1 cross-correlation computes
// each 2×2 block of outputs from a 4×4 tile d of its input as
//
//	Y = Aᵀ·[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]·A
//
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]
//
// so that summed over input channels the 16 elementwise products become 16
// GEMMs (one per element ξ of the 4×4 transformed tile), which multiply
// 16 values per output block where the direct convolution multiplies 36:
// 2.25 times fewer. The transforms use additions only (Bᵀ, Aᵀ) or run once
// per filter (G), and their rounding stays close to the direct sum's (the
// paper's Table 4 and §5: F(2×2, 3×3) loses no accuracy of note in
// float32; larger tiles do).
//
// The filter gradient is the adjoint: with dM = A·dY·Aᵀ for each 2×2 block
// dY of the output gradient (OutputAdjoint), the transformed weights'
// gradient sums V ⊙ dM over the tiles (16 GEMMs again) and the weights'
// one is Gᵀ·dU·G (FilterAdjoint).
//
// Images are channels last: a pixel's c channels are contiguous. The
// transformed tiles are planes: plane ξ holds tile t's c values at t·c.
package winograd

// Filter returns G·w·Gᵀ, the 16 transformed weights (row-major, ξ = 4a+b)
// of one 3×3 kernel w (row-major), computed in float64: G takes a column
// (p, q, r) to (p, (p+q+r)/2, (p−q+r)/2, r), first down the columns of w,
// then along the rows of the result.
func Filter(w [9]float64) (u [16]float64) {
	var t [4][3]float64
	for j := range 3 {
		p, q, r := w[j], w[3+j], w[6+j]
		t[0][j], t[1][j], t[2][j], t[3][j] = p, (p+q+r)/2, (p-q+r)/2, r
	}
	for a, row := range t {
		p, q, r := row[0], row[1], row[2]
		u[4*a], u[4*a+1], u[4*a+2], u[4*a+3] = p, (p+q+r)/2, (p-q+r)/2, r
	}
	return u
}

// FilterAdjoint returns Gᵀ·u·G, the 3×3 gradient (row-major) of a kernel
// whose transformed weights (Filter) have the gradient u: Gᵀ takes
// (p, q, r, s) to (p + (q+r)/2, (q−r)/2, (q+r)/2 + s), down the columns of
// u, then along the rows.
func FilterAdjoint(u [16]float64) (w [9]float64) {
	var t [3][4]float64
	for b := range 4 {
		p, q, r, s := u[b], u[4+b], u[8+b], u[12+b]
		t[0][b], t[1][b], t[2][b] = p+(q+r)/2, (q-r)/2, (q+r)/2+s
	}
	for i, row := range t {
		p, q, r, s := row[0], row[1], row[2], row[3]
		w[3*i], w[3*i+1], w[3*i+2] = p+(q+r)/2, (q-r)/2, (q+r)/2+s
	}
	return w
}

// Input writes the transform Bᵀ·d·B of tiles consecutive 4×4 tiles of a
// channels-last image with c channels per pixel and rows rs elements apart:
// tile t starts 2t pixels right of x[0] (tiles overlap by two columns),
// and v[ξ·vs + t·c + ch] = (Bᵀ·d·B)[ξ] with d[i][j] = x[i·rs + (2t+j)·c + ch].
func Input(tiles int, x []float32, rs, c int, v []float32, vs int) {
	if tiles <= 0 || c <= 0 {
		return
	}
	_ = x[3*rs+(2*tiles+2)*c-1] // the last value read
	_ = v[15*vs+tiles*c-1]      // and written
	if hasAVX && c%8 == 0 {
		inputAVX(tiles, &x[0], rs, c, &v[0], vs)
		return
	}
	inputGo(tiles, x, rs, c, v, vs)
}

// Output writes the inverse transform Aᵀ·m·A plus b of tiles consecutive
// tiles of transformed outputs m (plane ξ at m[ξ·ms], tile t's k values
// at t·k) as 2×2 blocks of a channels-last image with k channels and rows
// ys elements apart: y[i·ys + (2t+j)·k + o] = (Aᵀ·m·A)[i][j] + b[o].
func Output(tiles int, m []float32, ms, k int, b, y []float32, ys int) {
	if tiles <= 0 || k <= 0 {
		return
	}
	_ = m[15*ms+tiles*k-1]
	_ = b[k-1]
	_ = y[ys+2*tiles*k-1]
	if hasAVX && k%8 == 0 {
		outputAVX(tiles, &m[0], ms, k, &b[0], &y[0], ys)
		return
	}
	outputGo(tiles, m, ms, k, b, y, ys)
}

// OutputAdjoint writes A·dY·Aᵀ, the adjoint of Output's transform, for
// tiles consecutive 2×2 blocks of a channels-last output gradient with k
// channels and rows ys elements apart: block t starts 2t pixels right of
// dy[0], and dm[ξ·ms + t·k + o] = (A·dY·Aᵀ)[ξ] with dY[i][j] = dy[i·ys +
// (2t+j)·k + o].
func OutputAdjoint(tiles int, dy []float32, ys, k int, dm []float32, ms int) {
	if tiles <= 0 || k <= 0 {
		return
	}
	_ = dy[ys+2*tiles*k-1]
	_ = dm[15*ms+tiles*k-1]
	if hasAVX && k%8 == 0 {
		outputAdjointAVX(tiles, &dy[0], ys, k, &dm[0], ms)
		return
	}
	outputAdjointGo(tiles, dy, ys, k, dm, ms)
}

// Fast reports whether Input and Output run vector code for c input and
// k output channels: on amd64 with AVX, for multiples of 8.
func Fast(c, k int) bool { return hasAVX && c%8 == 0 && k%8 == 0 }

// inputGo is Input in plain Go: Bᵀ·d·B as the columns' transform d·B,
// then the rows' Bᵀ.
func inputGo(tiles int, x []float32, rs, c int, v []float32, vs int) {
	for t := range tiles {
		for ch := range c {
			var e [4][4]float32
			for i := range 4 {
				d := func(j int) float32 { return x[i*rs+(2*t+j)*c+ch] }
				e[i] = [4]float32{d(0) - d(2), d(1) + d(2), d(2) - d(1), d(1) - d(3)}
			}
			for j := range 4 {
				at := t*c + ch
				v[j*vs+at] = e[0][j] - e[2][j]
				v[(4+j)*vs+at] = e[1][j] + e[2][j]
				v[(8+j)*vs+at] = e[2][j] - e[1][j]
				v[(12+j)*vs+at] = e[1][j] - e[3][j]
			}
		}
	}
}

// outputGo is Output in plain Go: Aᵀ over the rows, then A over the
// columns.
func outputGo(tiles int, m []float32, ms, k int, b, y []float32, ys int) {
	for t := range tiles {
		for o := range k {
			at := t*k + o
			var s [2][4]float32
			for j := range 4 {
				m0, m1, m2, m3 := m[j*ms+at], m[(4+j)*ms+at], m[(8+j)*ms+at], m[(12+j)*ms+at]
				s[0][j] = m0 + m1 + m2
				s[1][j] = m1 - m2 - m3
			}
			for i := range 2 {
				y[i*ys+2*t*k+o] = s[i][0] + s[i][1] + s[i][2] + b[o]
				y[i*ys+(2*t+1)*k+o] = s[i][1] - s[i][2] - s[i][3] + b[o]
			}
		}
	}
}

// outputAdjointGo is OutputAdjoint in plain Go: with dY = [a b; c d], the
// rows of A·dY are [a b], [a+c b+d], [a−c b−d] and [−c −d], and A turns
// each row [p q] into [p, p+q, p−q, −q]. Negations subtract from zero and
// the last row's sums run as the vector code's do.
func outputAdjointGo(tiles int, dy []float32, ys, k int, dm []float32, ms int) {
	for t := range tiles {
		for o := range k {
			a, b := dy[2*t*k+o], dy[(2*t+1)*k+o]
			c, d := dy[ys+2*t*k+o], dy[ys+(2*t+1)*k+o]
			p, q, r, s, nc := a+c, b+d, a-c, b-d, 0-c
			v := [16]float32{
				a, a + b, a - b, 0 - b,
				p, p + q, p - q, 0 - q,
				r, r + s, r - s, 0 - s,
				nc, nc - d, d - c, d,
			}
			for xi, x := range v {
				dm[xi*ms+t*k+o] = x
			}
		}
	}
}
