package qgemm

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The register tile: mr rows of A by nr columns of B, four K steps per
// 32-bit lane (VPMADDUBSW pairs two steps into 16 bits, VPMADDWD pairs
// two of those into 32), so K is padded to a multiple of kStep.
const mr, nr, kStep = 4, 16, 4

// Weight range: the 7-bit guard against VPMADDUBSW's 16-bit saturation
// (doc.go).
const (
	MinWeight = -64
	MaxWeight = 63
)

// MaxK is the longest K whose sums stay exact in int32: |Σ (a − zpA)·b|
// is at most k·255·64.
const MaxK = math.MaxInt32 / (255 * 64)

// PackedB is a k×n int8 weight matrix packed once into the kernels'
// layout, with its column sums, for many products (every batch of
// inference multiplies by the same weights). Panel q holds columns
// 16q..16q+15 (zero-padded past n) as kp/4 groups of 64 bytes; group g
// holds, column by column, the four weights B[4g..4g+3][col] (zero past
// k), so that one 32-byte load is eight columns' four K steps, the
// operand order of VPMADDUBSW against a broadcast of four A bytes.
type PackedB struct {
	k, n, kp int
	panels   []int8
	colSum   []int32
}

// Dims returns B's k and n.
func (p *PackedB) Dims() (k, n int) { return p.k, p.n }

// ColSums returns B's column sums (n of them; the caller must not change
// them).
func (p *PackedB) ColSums() []int32 { return p.colSum }

// panelBytes is the size of one nr-column panel.
func (p *PackedB) panelBytes() int { return p.kp * nr }

// panel returns panel q.
func (p *PackedB) panel(q int) []int8 {
	s := p.panelBytes()
	return p.panels[q*s : (q+1)*s]
}

// PackB packs B (k×n, row stride ldb, weights in [MinWeight, MaxWeight])
// for Gemm. It copies B, which the caller may then change or drop. It
// returns an error naming the first weight outside the 7-bit range (the
// saturation guard, doc.go) and for shapes or lengths that do not fit.
func PackB(k, n int, b []int8, ldb int) (*PackedB, error) {
	switch {
	case k < 0 || n < 0:
		return nil, fmt.Errorf("qgemm: PackB: negative shape k=%d n=%d", k, n)
	case k > MaxK:
		return nil, fmt.Errorf("qgemm: PackB: k=%d, want at most %d (int32 sums would overflow)", k, MaxK)
	case k > 0 && n > 0 && ldb < n:
		return nil, fmt.Errorf("qgemm: PackB: row stride %d below n=%d", ldb, n)
	case k > 0 && n > 0 && len(b) < (k-1)*ldb+n:
		return nil, fmt.Errorf("qgemm: PackB: B [%d, %d] with row stride %d needs %d elements, have %d", k, n, ldb, (k-1)*ldb+n, len(b))
	}
	for p := range k {
		for j, v := range b[p*ldb : p*ldb+n] {
			if v < MinWeight || v > MaxWeight {
				return nil, fmt.Errorf("qgemm: PackB: weight B[%d][%d] = %d outside [%d, %d], the 7-bit range that keeps VPMADDUBSW's 16-bit pair sums exact", p, j, v, MinWeight, MaxWeight)
			}
		}
	}
	kp := roundUp(k, kStep)
	pb := &PackedB{k: k, n: n, kp: kp, colSum: ColSums(k, n, b, ldb)}
	panels := ceilDiv(n, nr)
	pb.panels = make([]int8, panels*pb.panelBytes())
	for q := range panels {
		dst := pb.panel(q)
		for j := range min(nr, n-q*nr) {
			col := q*nr + j
			for p := range k {
				dst[p/kStep*nr*kStep+j*kStep+p%kStep] = b[p*ldb+col]
			}
		}
	}
	return pb, nil
}

// packA packs rows of A (each k bytes, row stride lda) into strips of mr
// rows in dst: strip s, group g holds, row by row, the four bytes
// A[s·mr+i][4g..4g+3], zero past k and past the last row, so the kernel
// broadcasts one row's four K steps with one 32-bit load. dst has room
// for ceil(rows/mr) strips of kp·mr bytes.
func packA(dst []uint8, rows, k, kp int, a []uint8, lda int) {
	strips := ceilDiv(rows, mr)
	dst = dst[:strips*kp*mr]
	whole := k / kStep * kStep
	for i := range rows {
		src := a[i*lda : i*lda+k]
		d := dst[i/mr*kp*mr+i%mr*kStep:]
		// Four bytes a group, one 32-bit load and store each.
		for p := 0; p < whole; p += kStep {
			binary.LittleEndian.PutUint32(d[p*mr:], binary.LittleEndian.Uint32(src[p:]))
		}
		if whole < k {
			g := d[whole*mr : whole*mr+kStep]
			clear(g[copy(g, src[whole:]):])
		}
	}
	if rows%mr != 0 { // the last strip's padding rows
		last := dst[(strips-1)*kp*mr:]
		for g := 0; g < kp; g += kStep {
			clear(last[g*mr+rows%mr*kStep : g*mr+mr*kStep])
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }
