package qgemm

import (
	"fmt"
	"sync"
)

// Blocking: a block of A rows is packed and multiplied by every B panel
// into an int32 block of sums before its epilogue runs, so the packed
// block (at most aBlockBytes) stays in L2 while the panels stream past,
// and the sums (at most cBlockBytes) are still in cache for the epilogue.
const (
	aBlockBytes = 64 << 10
	cBlockBytes = 256 << 10
	maxBlockRow = 256
)

// workspace is one product's scratch: the packed A block, its sums, a
// row of float32s for the int8 epilogue, the per-column zero-point
// corrections and combined scales, and a tile for a ragged strip. Pooled, so that a product
// allocates nothing after warm-up.
type workspace struct {
	a     []uint8
	c     []int32
	tmp   []float32
	corr  []int32   // zpA·colsum[j]
	scale []float32 // ScaleA·ScaleB[j]
	tile  [mr * nr]int32
	ks    *kernels // the product's kernels
	u8    []uint8  // GemmUint8: a block of requantized rows, padded to whole panels
	corrP []int32  // GemmUint8: corr padded to whole panels
}

var workspaces sync.Pool

func getWorkspace(na, nc, ntmp, n int) *workspace {
	ws, ok := workspaces.Get().(*workspace)
	if !ok {
		ws = new(workspace)
	}
	ws.a = grow(ws.a, na)
	ws.c = grow(ws.c, nc)
	ws.tmp = grow(ws.tmp, ntmp)
	ws.corr = grow(ws.corr, n)
	ws.scale = grow(ws.scale, n)
	return ws
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// blockRows is the number of A rows packed and multiplied at a time for
// K padded to kp and N padded to np: a multiple of mr that keeps both
// blocks within their budgets, at least mr.
func blockRows(m, kp, np int) int {
	r := min(aBlockBytes/max(kp, 1), cBlockBytes/(4*max(np, 1)), maxBlockRow)
	r = max(r/mr*mr, mr)
	return min(r, roundUp(m, mr))
}

// checkA reports an A that is not m×k with row stride lda.
func checkA(op string, m, k int, a []uint8, lda int) error {
	switch {
	case m < 0:
		return fmt.Errorf("qgemm: %s: negative row count m=%d", op, m)
	case m == 0 || k == 0:
		return nil
	case lda < k:
		return fmt.Errorf("qgemm: %s: A row stride %d below k=%d", op, lda, k)
	case len(a) < (m-1)*lda+k:
		return fmt.Errorf("qgemm: %s: A [%d, %d] with row stride %d needs %d elements, have %d", op, m, k, lda, (m-1)*lda+k, len(a))
	}
	return nil
}

// checkOut reports an output too short for m×n with row stride ld.
func checkOut(op string, m, n, ld, have int) error {
	switch {
	case m == 0 || n == 0:
		return nil
	case ld < n:
		return fmt.Errorf("qgemm: %s: output row stride %d below n=%d", op, ld, n)
	case have < (m-1)*ld+n:
		return fmt.Errorf("qgemm: %s: output [%d, %d] with row stride %d needs %d elements, have %d", op, m, n, ld, (m-1)*ld+n, have)
	}
	return nil
}

// run multiplies A (m×k uint8) by pb block by block on the calling
// goroutine and hands each block's raw sums Σ_p A[i][p]·B[p][j] to emit:
// rows i0..i0+rows, row r at sums[r*ld:][:n]. emit subtracts the
// zero-point correction ws.corr[j] = zpA·colsum[j] as it reads them; with
// ep set, ws.scale holds ep's ScaleA·ScaleB[j].
func run(m int, a []uint8, lda int, zpA uint8, pb *PackedB, ep *Epilogue, ntmp int, emit func(ws *workspace, i0, rows int, sums []int32, ld int)) {
	k, n, kp := pb.k, pb.n, pb.kp
	if m == 0 || n == 0 {
		return
	}
	ks := current()
	panels := ceilDiv(n, nr)
	np := panels * nr
	br := blockRows(m, kp, np)
	ws := getWorkspace(br*kp, br*np, ntmp, n)
	defer workspaces.Put(ws)
	ws.ks = ks
	for j, cs := range pb.colSum {
		ws.corr[j] = int32(zpA) * cs
	}
	if ep != nil {
		for j, s := range ep.ScaleB {
			ws.scale[j] = ep.ScaleA * s
		}
	}
	kg := kp / kStep
	for i0 := 0; i0 < m; i0 += br {
		rows := min(br, m-i0)
		sums := ws.c[:rows*np]
		if kg == 0 {
			clear(sums)
		} else {
			blockSums(ks, kg, rows, a[i0*lda:], lda, k, kp, pb, ws, sums, np)
		}
		emit(ws, i0, rows, sums, np)
	}
}

// GemmInt32 computes c[i*ldc+j] = Σ_p (A[i][p] − zpA)·B[p][j] for A
// (m×k uint8, row stride lda, k = pb's) and the packed weights pb, on the
// calling goroutine. It returns an error, writing nothing, when a shape
// or length does not fit.
func GemmInt32(m int, a []uint8, lda int, zpA uint8, pb *PackedB, c []int32, ldc int) error {
	const op = "GemmInt32"
	if err := checkArgs(op, m, a, lda, pb); err != nil {
		return err
	}
	if err := checkOut(op, m, pb.n, ldc, len(c)); err != nil {
		return err
	}
	run(m, a, lda, zpA, pb, nil, 0, func(ws *workspace, i0, rows int, sums []int32, ld int) {
		corr := ws.corr[:pb.n]
		for r := range rows {
			dst, src := c[(i0+r)*ldc:][:len(corr)], sums[r*ld:][:len(corr)]
			for j, v := range src {
				dst[j] = v - corr[j]
			}
		}
	})
	return nil
}

// GemmFloat32 computes out[i*ldo+j] = ep(Σ_p (A[i][p] − zpA)·B[p][j]),
// the dequantizing epilogue (Epilogue) applied to each block of sums
// while it is in cache.
func GemmFloat32(m int, a []uint8, lda int, zpA uint8, pb *PackedB, ep *Epilogue, out []float32, ldo int) error {
	const op = "GemmFloat32"
	if err := checkArgs(op, m, a, lda, pb); err != nil {
		return err
	}
	if err := ep.check(op, pb.n); err != nil {
		return err
	}
	if err := checkOut(op, m, pb.n, ldo, len(out)); err != nil {
		return err
	}
	run(m, a, lda, zpA, pb, ep, 0, func(ws *workspace, i0, rows int, sums []int32, ld int) {
		for r := range rows {
			ep.dequantRow(ws.ks, sums[r*ld:r*ld+pb.n], ws.corr, ws.scale, out[(i0+r)*ldo:])
		}
	})
	return nil
}

// GemmInt8 computes out[i*ldo+j] = QuantizeLinear(ep(Σ_p (A[i][p] −
// zpA)·B[p][j]), rq.Scale, rq.Zero): the product requantized to int8 for
// the next int8 op, with no float32 tensor in between.
func GemmInt8(m int, a []uint8, lda int, zpA uint8, pb *PackedB, ep *Epilogue, rq Requant, out []int8, ldo int) error {
	if err := checkRequant("GemmInt8", m, a, lda, pb, ep, rq.Scale, ldo, len(out)); err != nil {
		return err
	}
	run(m, a, lda, zpA, pb, ep, pb.n, func(ws *workspace, i0, rows int, sums []int32, ld int) {
		for r := range rows {
			ep.dequantRow(ws.ks, sums[r*ld:r*ld+pb.n], ws.corr, ws.scale, ws.tmp)
			requantRow(ws.tmp, rq, out[(i0+r)*ldo:])
		}
	})
	return nil
}

// checkRequant checks the arguments of a product requantized to 8 bits
// (GemmInt8, GemmUint8) with output scale scale into an output of outLen
// elements.
func checkRequant(op string, m int, a []uint8, lda int, pb *PackedB, ep *Epilogue, scale float32, ldo, outLen int) error {
	if err := checkArgs(op, m, a, lda, pb); err != nil {
		return err
	}
	if err := ep.check(op, pb.n); err != nil {
		return err
	}
	if !finitePositive(scale) {
		return fmt.Errorf("qgemm: %s: output scale %v, want a finite positive number", op, scale)
	}
	return checkOut(op, m, pb.n, ldo, outLen)
}

func checkArgs(op string, m int, a []uint8, lda int, pb *PackedB) error {
	if pb == nil {
		return fmt.Errorf("qgemm: %s: nil packed weights", op)
	}
	return checkA(op, m, pb.k, a, lda)
}

// blockSums computes the raw sums of rows of A (row stride lda, the
// slice running to the end of A) by every panel of pb into sums (row
// stride np). The kernels read A's rows where they lie, four bytes a
// group: when K is not whole groups (an im2col of 5×5 kernels: K = 25)
// the last group also reads up to three bytes past a row's end, which
// meet PackB's zero weights and add nothing. Strips whose reads would
// leave the slice (the last ones of A) are packed instead, K padded with
// zeros; so is a last strip of fewer than mr rows, computed into a tile
// of its own so that its padding rows' writes do not leave the block. A
// strip of one row takes the row kernel. A last panel of at most eight
// real columns takes the half-width tile where the kernels have one,
// leaving the sums' padding columns unwritten (no epilogue reads a
// padding column's value into an output).
func blockSums(ks *kernels, kg, rows int, a []uint8, lda, k, kp int, pb *PackedB, ws *workspace, sums []int32, np int) {
	inPlace := func(r, n int) bool { return (r+n-1)*lda+kp <= len(a) }
	full, rem := rows/mr, rows%mr
	nd := 0 // the leading full strips read in place; the rest are packed
	for nd < full && inPlace(nd*mr, mr) {
		nd++
	}
	remInPlace := rem == 1 && nd == full && inPlace(full*mr, 1)
	if packRows := rows - nd*mr; packRows > 0 && !remInPlace {
		packA(ws.a, packRows, k, kp, a[nd*mr*lda:], lda)
	}
	for q := range ceilDiv(pb.n, nr) {
		bp := pb.panel(q)
		tile, cols := ks.tile, nr
		if pb.n-q*nr <= nr/2 && ks.tile8 != nil { // columns 8-15 of the last panel are padding
			tile, cols = ks.tile8, nr/2
		}
		for s := range full {
			c := sums[s*mr*np+q*nr:]
			if s < nd {
				tile(kg, a[s*mr*lda:], lda, kStep, bp, c, np)
			} else {
				tile(kg, ws.a[(s-nd)*kp*mr:], kStep, mr*kStep, bp, c, np)
			}
		}
		if rem == 0 {
			continue
		}
		c := sums[full*mr*np+q*nr:]
		strip := ws.a[(full-nd)*kp*mr:]
		switch {
		case remInPlace:
			ks.row(kg, a[full*mr*lda:], kStep, bp, c)
		case rem == 1:
			ks.row(kg, strip, mr*kStep, bp, c)
		default:
			tile(kg, strip, kStep, mr*kStep, bp, ws.tile[:], nr)
			for i := range rem {
				copy(c[i*np:i*np+cols], ws.tile[i*nr:i*nr+cols])
			}
		}
	}
}
