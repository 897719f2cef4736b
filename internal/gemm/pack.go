package gemm

import (
	"sync"

	"github.com/plumbml/plumb/tensor"
)

// pack copies a strip of width w (MR rows of op(A), or NR columns of
// op(B)) over kc steps of K into dst: element (i, p) to dst[p*w + i], with
// the entries i >= n set to zero so the micro-kernel always computes a
// whole MR×NR tile. Element (i, p) lies at src[p*ld + i] when each step is
// a contiguous run (op(A) = Aᵀ, op(B) = B), else at src[i*ld + p].
func pack[T tensor.Float](dst []T, w, n, kc int, src []T, ld int, runsPerStep bool) {
	dst = dst[:w*kc]
	if runsPerStep {
		for p := range kc {
			d := dst[p*w : p*w+w]
			clear(d[copy(d, src[p*ld:][:n]):])
		}
		return
	}
	// A transpose: whole blocks in registers, the ragged rest one by one.
	doneRows, doneK := transposeFast(dst, w, n, kc, src, ld)
	for i := range n {
		p0 := 0
		if i < doneRows {
			p0 = doneK
		}
		for p, v := range src[i*ld+p0 : i*ld+kc] {
			dst[(p0+p)*w+i] = v
		}
	}
	if n < w {
		for p := range kc {
			clear(dst[p*w+n : p*w+w])
		}
	}
}

// packA packs rows row0..row0+rows of op(A), columns p0..p0+kc, as one
// MR-row strip (see pack).
func packA[T tensor.Float](transA bool, a []T, lda, row0, rows, p0, kc, mr int, dst []T) {
	if transA {
		pack(dst, mr, rows, kc, a[p0*lda+row0:], lda, true)
		return
	}
	pack(dst, mr, rows, kc, a[row0*lda+p0:], lda, false)
}

// packB packs rows p0..p0+kc of op(B), columns col0..col0+cols, as one
// NR-column panel (see pack).
func packB[T tensor.Float](transB bool, b []T, ldb, p0, kc, col0, cols, nr int, dst []T) {
	if transB {
		pack(dst, nr, cols, kc, b[col0*ldb+p0:], ldb, false)
		return
	}
	pack(dst, nr, cols, kc, b[p0*ldb+col0:], ldb, true)
}

// workspace is one core's packing buffers: an MC×KC block of A, a KC×NC
// slab of B and one MR×NR tile for ragged edges. Workspaces are pooled, so
// after warm-up a product allocates nothing.
type workspace[T tensor.Float] struct {
	a, b, tile []T
}

var workspaces32, workspaces64 sync.Pool

// getWorkspace returns a pooled workspace with buffers of at least the given
// lengths (contents undefined).
func getWorkspace[T tensor.Float](na, nb, ntile int) *workspace[T] {
	ws, ok := poolFor[T](&workspaces32, &workspaces64).Get().(*workspace[T])
	if !ok {
		ws = new(workspace[T])
	}
	ws.a = grow(ws.a, na)
	ws.b = grow(ws.b, nb)
	ws.tile = grow(ws.tile, ntile)
	return ws
}

func putWorkspace[T tensor.Float](ws *workspace[T]) {
	poolFor[T](&workspaces32, &workspaces64).Put(ws)
}

// grow returns s resliced to n elements, reallocated if too small.
func grow[T tensor.Float](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
