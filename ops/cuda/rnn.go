//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// rnnSchedule is how the fused LSTM and GRU walk a ragged batch without
// padding, as ops' rnnSchedule does on the host: sequences sorted by
// length, longest first (stably), and at time step t only the first
// active[t] of them, those longer than t, take part, so the active rows of
// the packed state [B, H] are always a prefix and one GEMM per step serves
// them (cuDNN's packed-sequence layout). The device copy idx holds, as
// int64, order [B] (the j-th longest sequence), then per step the value
// rows of the active sequences ([total] in all, step t from start[t]),
// then prev [total]: the row processed before row r, or -(q+1) at the
// first step of sequence q (kernels/rnn.cu).
type rnnSchedule struct {
	batch, total int
	active       []int // active[t] = number of sequences longer than t
	start        []int // start[t] = Σ active[:t], step t's place in the rows
	host         []int64
	idx          *Buffer
}

// newRNNSchedule builds the schedule of offsets (already validated by
// checkOffsets) on the host; upload puts it on the device.
func newRNNSchedule(offsets []int, reverse bool) *rnnSchedule {
	b := len(offsets) - 1
	length := func(q int) int { return offsets[q+1] - offsets[q] }
	order := make([]int, b)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return length(j) - length(i) })
	s := &rnnSchedule{batch: b, total: offsets[b]}
	if b > 0 {
		s.active = make([]int, length(order[0]))
	}
	for _, q := range order {
		for t := 0; t < length(q); t++ {
			s.active[t]++
		}
	}
	s.host = make([]int64, b+2*s.total)
	rows, prev := s.host[b:b+s.total], s.host[b+s.total:]
	for j, q := range order {
		s.host[j] = int64(q)
	}
	// row is the value row of sequence q at its step t.
	row := func(q, t int) int {
		if reverse {
			return offsets[q+1] - 1 - t
		}
		return offsets[q] + t
	}
	s.start = make([]int, len(s.active))
	at := 0
	for t, n := range s.active {
		s.start[t] = at
		for j := 0; j < n; j++ {
			q := order[j]
			r := row(q, t)
			rows[at+j] = int64(r)
			if t == 0 {
				prev[r] = int64(-q - 1)
			} else {
				prev[r] = int64(row(q, t-1))
			}
		}
		at += n
	}
	return s
}

// upload copies the schedule's index arrays to the device; called inside do.
func (s *rnnSchedule) upload(d *Device) error {
	var err error
	if s.idx, err = d.newBuffer(tensor.Int64, tensor.Shape{len(s.host)}); err != nil || len(s.host) == 0 {
		return err
	}
	return d.copyHtoD(s.idx, tensor.MustFromSlice(s.host))
}

// free releases the device copy.
func (s *rnnSchedule) free() {
	if s != nil {
		freeAll(s.idx)
		s.idx = nil
	}
}

// order, rows and prev are device pointers to the index arrays.
func (s *rnnSchedule) order() uint64 { return ptr(s.idx) }
func (s *rnnSchedule) rows(t int) uint64 {
	return ptr(s.idx) + uint64(8*(s.batch+s.start[t]))
}
func (s *rnnSchedule) prev() uint64 { return ptr(s.idx) + uint64(8*(s.batch+s.total)) }

// elemPtr returns the device address of element off of b, for kernels and
// GEMMs that start inside a buffer.
func elemPtr(b *Buffer, off int) uint64 { return ptr(b) + uint64(4*off) }

// gemmRows is C[:m] (+)= op(A[:m])·op(B) for the row-major operands a (row
// stride lda from element aOff), b and c, unbatched; called inside do.
func (d *Device) gemmRows(transA, transB bool, m, n, k int, a *Buffer, aOff, lda int, b *Buffer, bOff, ldb int, beta float32, c *Buffer, cOff, ldc int) error {
	return gemmCall{transA: transA, transB: transB, m: m, n: n, k: k, batch: 1, alpha: 1, beta: beta,
		a: a, aOff: aOff, lda: lda, b: b, bOff: bOff, ldb: ldb, c: c, cOff: cOff, ldc: ldc}.run(d)
}

// Split-K of the step GEMMs: a step multiplies only the active rows (64
// at batch 64), so the tiled GEMM's grid of 64×64 tiles leaves most of a
// GPU idle (8 blocks for δh = δZ·Uᵀ at H = 512). stepGemm splits K into
// up to maxSplits chunks of at least minSplitK until about splitBlocks
// blocks run, and sums the partial products with rnn_sum_parts.
const (
	splitBlocks = 128
	maxSplits   = 16
	minSplitK   = 64
)

// stepGemm is C[:m] = beta·C[:m] + A[:m]·op(B) for a recurrent step (A
// not transposed), split over K as above; called inside do.
func (d *Device) stepGemm(transB bool, m, n, k int, a *Buffer, aOff, lda int, b *Buffer, bOff, ldb int, beta float32, c *Buffer, cOff, ldc int) error {
	blocks := ((m + gemmTile - 1) / gemmTile) * ((n + gemmTile - 1) / gemmTile)
	splits := 1
	for blocks*splits < splitBlocks && 2*splits <= maxSplits && k%(2*splits) == 0 && k/(2*splits) >= minSplitK {
		splits *= 2
	}
	if splits == 1 || m == 0 || n == 0 {
		return d.gemmRows(false, transB, m, n, k, a, aOff, lda, b, bOff, ldb, beta, c, cOff, ldc)
	}
	kc := k / splits
	parts, err := d.newBuffer(tensor.Float32, tensor.Shape{splits, m, n})
	if err != nil {
		return err
	}
	defer parts.Free() // later work on the stream reuses it only after the sum
	g := gemmCall{transB: transB, m: m, n: n, k: kc, batch: splits, alpha: 1,
		a: a, aOff: aOff, lda: lda, strideA: kc, modA: splits,
		b: b, bOff: bOff, ldb: ldb, strideB: kc * ldb,
		c: parts, ldc: n, strideC: m * n}
	if transB {
		g.strideB = kc
	}
	if err := g.run(d); err != nil {
		return err
	}
	return d.launch("rnn_sum_parts", grid1(m*n), block1, ptr(parts), elemPtr(c, cOff), i64(splits), i64(m), i64(n), i64(ldc), f64(float64(beta)))
}

// zeroBuffers allocates zero-filled float32 buffers of the shapes; called inside do.
func (d *Device) zeroBuffers(shapes ...tensor.Shape) ([]*Buffer, error) {
	bs := make([]*Buffer, len(shapes))
	for i, sh := range shapes {
		b, err := d.newBuffer(tensor.Float32, sh)
		if err != nil {
			freeAll(bs...)
			return nil, err
		}
		bs[i] = b
		if err := d.zero(b); err != nil {
			freeAll(bs...)
			return nil, err
		}
	}
	return bs, nil
}

// inputGrads writes the gradients of the input projection x·w + b of an
// RNN with gates·H columns, given dz [total, gates·H], the gradient of its
// pre-activations: dx = dz·wᵀ, dw = xᵀ·dz and db = Σ_rows dz, each only
// when its buffer is non-nil. LSTM and GRU share it.
func (d *Device) inputGrads(x, w, dz *Buffer, total, nIn, gates int, dx, dw, db *Buffer) error {
	if dx != nil {
		if err := d.gemmRows(false, true, total, nIn, gates, dz, 0, gates, w, 0, gates, 0, dx, 0, nIn); err != nil {
			return err
		}
	}
	if dw != nil {
		if err := d.gemmRows(true, false, nIn, gates, total, x, 0, nIn, dz, 0, gates, 0, dw, 0, gates); err != nil {
			return err
		}
	}
	if db != nil {
		return d.colSum(dz, total, gates, db)
	}
	return nil
}
