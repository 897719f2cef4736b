package vec

import "github.com/plumbml/plumb/tensor"

// MaxPool2x2 writes the maxima of len(yr) 2×2 stride-2 windows into yr
// and their flat indices, base added, into ar: window k covers x[top+2k],
// x[top+2k+1] and the two cells w further on. The cells are compared in
// the order top-left, top-right, bottom-left, bottom-right with a strict
// greater-than, so the first of equal maxima wins and NaN never replaces
// a maximum. On amd64 with AVX2, float32 rows go eight windows at a time
// through maxPool2x2Vec (compare and blend, no branches to mispredict on
// random data); the Go loop does the rest.
func MaxPool2x2[T tensor.Float](x []T, top, w, base int, yr []T, ar []int) {
	r0, r1 := x[top:][:2*len(yr)], x[top+w:][:2*len(yr)]
	for ow := maxPool2x2Vec(x, top, w, base, yr, ar); ow < len(yr); ow++ {
		j := 2 * ow
		at, best := top+j, r0[j]
		if v := r0[j+1]; v > best {
			at, best = top+j+1, v
		}
		if v := r1[j]; v > best {
			at, best = top+w+j, v
		}
		if v := r1[j+1]; v > best {
			at, best = top+w+j+1, v
		}
		yr[ow], ar[ow] = best, base+at
	}
}
