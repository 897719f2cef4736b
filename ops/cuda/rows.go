//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/tensor"
)

// The row kernels of kernels/rows.cu move whole rows of [rows, inner]
// matrices by a plan made on the host: the embedding lookup and the
// sequence ops whose outputs are copies of input rows use them. Sums of
// several rows into one (an embedding row looked up twice, a sequence row
// expanded over many steps) follow a plan in CSR form from segments, so
// the kernels need no atomics and add in ops' order.

// upIndex copies host indices into a new int64 buffer; called inside do.
func (d *Device) upIndex(v []int64) (*Buffer, error) {
	b, err := d.newBuffer(tensor.Int64, tensor.Shape{len(v)})
	if err != nil || len(v) == 0 {
		return b, err
	}
	if err := d.copyHtoD(b, tensor.MustFromSlice(v)); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// int64s converts indices for upIndex.
func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// segments inverts the map src (row j goes to target src[j], or nowhere
// when src[j] < 0) into CSR form over n targets: target t receives rows
// list[seg[t]:seg[t+1]], ascending, which is the order in which ops'
// scatter-adds sum them.
func segments(src []int, n int) (seg, list []int64) {
	seg = make([]int64, n+1)
	for _, t := range src {
		if t >= 0 {
			seg[t+1]++
		}
	}
	for t := range n {
		seg[t+1] += seg[t]
	}
	list = make([]int64, seg[n])
	next := append([]int64(nil), seg[:n]...)
	for j, t := range src {
		if t >= 0 {
			list[next[t]] = int64(j)
			next[t]++
		}
	}
	return seg, list
}

// gatherRows writes out[r] = x[src[r]] (zeros where src[r] < 0) for the
// rows of out [len(src), inner...]; called inside do.
func (d *Device) gatherRows(x, out *Buffer, src []int64, inner int) error {
	if len(src) == 0 || inner == 0 {
		return nil
	}
	s, err := d.upIndex(src)
	if err != nil {
		return err
	}
	defer s.Free()
	return d.launch("rows_gather", grid1(len(src)*inner), block1, ptr(x), ptr(s), ptr(out), i64(len(src)), i64(inner))
}

// scatterRows writes out[dst[r]] = x[r] for the rows of x; the dst rows
// are distinct. Called inside do.
func (d *Device) scatterRows(x, out *Buffer, dst []int64, inner int) error {
	if len(dst) == 0 || inner == 0 {
		return nil
	}
	s, err := d.upIndex(dst)
	if err != nil {
		return err
	}
	defer s.Free()
	return d.launch("rows_scatter", grid1(len(dst)*inner), block1, ptr(x), ptr(s), ptr(out), i64(len(dst)), i64(inner))
}

// sumRows writes, for each of the len(seg)-1 segments k, the sum of rows
// list[seg[k]:seg[k+1]] of x into row dstrow[k] of out (row k when dstrow
// is nil); an empty segment writes zeros. Called inside do.
func (d *Device) sumRows(x, out *Buffer, seg, list, dstrow []int64, inner int) error {
	segs := len(seg) - 1
	if segs == 0 || inner == 0 {
		return nil
	}
	var bufs []*Buffer
	defer func() { freeAll(bufs...) }()
	for _, v := range [][]int64{seg, list, dstrow} {
		if v == nil {
			bufs = append(bufs, nil)
			continue
		}
		b, err := d.upIndex(v)
		if err != nil {
			return err
		}
		bufs = append(bufs, b)
	}
	return d.launch("rows_segsum", grid1(segs*inner), block1, ptr(x), ptr(bufs[0]), ptr(bufs[1]), ptr(bufs[2]), ptr(out),
		i64(segs), i64(inner))
}
