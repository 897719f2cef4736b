package gemm

import "sync"

// packA copies rows row0..row0+rows of op(A), columns p0..p0+kc, into dst as
// one MR-row strip: element (i, p) at p*mr + i, rows past rows set to zero
// so the micro-kernel can always compute a whole MR×NR tile.
func packA[T Float](transA bool, a []T, lda, row0, rows, p0, kc, mr int, dst []T) {
	dst = dst[:mr*kc]
	if transA {
		// op(A)(i, p) = a[p*lda + i]: each p is a contiguous run of rows.
		for p := range kc {
			d := dst[p*mr : p*mr+mr]
			n := copy(d, a[(p0+p)*lda+row0:][:rows])
			clear(d[n:])
		}
		return
	}
	for i := range rows {
		src := a[(row0+i)*lda+p0:][:kc]
		for p, v := range src {
			dst[p*mr+i] = v
		}
	}
	if rows < mr {
		for p := range kc {
			clear(dst[p*mr+rows : p*mr+mr])
		}
	}
}

// packB copies rows p0..p0+kc of op(B), columns col0..col0+cols, into dst as
// one NR-column panel: element (p, j) at p*nr + j, columns past cols zero.
func packB[T Float](transB bool, b []T, ldb, p0, kc, col0, cols, nr int, dst []T) {
	dst = dst[:nr*kc]
	if !transB {
		for p := range kc {
			d := dst[p*nr : p*nr+nr]
			n := copy(d, b[(p0+p)*ldb+col0:][:cols])
			clear(d[n:])
		}
		return
	}
	// op(B)(p, j) = b[j*ldb + p]: each column j is a contiguous run of p.
	for j := range cols {
		src := b[(col0+j)*ldb+p0:][:kc]
		for p, v := range src {
			dst[p*nr+j] = v
		}
	}
	if cols < nr {
		for p := range kc {
			clear(dst[p*nr+cols : p*nr+nr])
		}
	}
}

// workspace is one core's packing buffers: an MC×KC block of A, a KC×NC
// slab of B and one MR×NR tile for ragged edges. Workspaces are pooled, so
// after warm-up a product allocates nothing.
type workspace[T Float] struct {
	a, b, tile []T
}

var workspaces32, workspaces64 sync.Pool

// getWorkspace returns a pooled workspace with buffers of at least the given
// lengths (contents undefined).
func getWorkspace[T Float](na, nb, ntile int) *workspace[T] {
	ws, ok := poolFor[T](&workspaces32, &workspaces64).Get().(*workspace[T])
	if !ok {
		ws = new(workspace[T])
	}
	ws.a = grow(ws.a, na)
	ws.b = grow(ws.b, nb)
	ws.tile = grow(ws.tile, ntile)
	return ws
}

func putWorkspace[T Float](ws *workspace[T]) {
	poolFor[T](&workspaces32, &workspaces64).Put(ws)
}

// grow returns s resliced to n elements, reallocated if too small.
func grow[T Float](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
