package ops

import (
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The rows of a recurrent step are spread over the cores from a few
// thousand gate units on (par.EachRow): with ragged lengths, initial
// states and peepholes, the LSTM and both GRU forms give the same bits
// forward and backward on one core as on several while the batch is too
// small to split. A batch of enough sequences runs as one run per core
// (rnnSchedule.split), whose steps multiply fewer rows at a time; the GEMM
// may then round a row differently (its kernels depend on the row count),
// so the results agree within float rounding.
func TestRNNRowsOverCoresMatchOneCore(t *testing.T) {
	const nIn = 5
	ragged := func(seqs int, length func(i int) int) []int {
		off := []int{0}
		for i := range seqs {
			off = append(off, off[i]+length(i))
		}
		return off
	}
	short := ragged(15, func(i int) int { return min(i, 1+(i*7)%6) }) // lengths 0-6, 15 sequences: not split
	long := ragged(40, func(i int) int { return 1 + (i*11)%17 })      // lengths 1-17, 40 sequences: split
	const hs, hl = 300, 96
	bs, bl, ts, tl := 15, 40, short[15], long[40]
	for _, c := range []struct {
		name  string
		op    func() Op
		in    []*tensor.Tensor
		exact bool
	}{
		{"lstm", func() Op { return LSTMOp(LSTMAttrs{Offsets: short}) },
			ins(randn(61, ts, nIn), randn(62, nIn, 4*hs), randn(63, hs, 4*hs), randn(64, 4*hs), randn(65, 3*hs), randn(66, bs, hs), randn(67, bs, hs)), true},
		{"gru_reset_after", func() Op { return GRUOp(GRUAttrs{Offsets: short, ResetAfter: true}) },
			ins(randn(71, ts, nIn), randn(72, nIn, 3*hs), randn(73, hs, 3*hs), randn(74, 2, 3*hs), randn(75, bs, hs)), true},
		{"gru_reset_before", func() Op { return GRUOp(GRUAttrs{Offsets: short}) },
			ins(randn(81, ts, nIn), randn(82, nIn, 3*hs), randn(83, hs, 3*hs), randn(84, 3*hs), randn(85, bs, hs)), true},
		{"lstm_split", func() Op { return LSTMOp(LSTMAttrs{Offsets: long}) }, // peepholes: backward runs as one
			ins(randn(86, tl, nIn), randn(87, nIn, 4*hl), randn(88, hl, 4*hl), randn(89, 4*hl), randn(90, 3*hl), randn(66, bl, hl), randn(67, bl, hl)), false},
		{"lstm_split_reverse", func() Op { return LSTMOp(LSTMAttrs{Offsets: long, Reverse: true}) },
			ins(randn(91, tl, nIn), randn(92, nIn, 4*hl), randn(93, hl, 4*hl), randn(94, 4*hl)), false},
		{"gru_reset_after_split", func() Op { return GRUOp(GRUAttrs{Offsets: long, ResetAfter: true}) },
			ins(randn(95, tl, nIn), randn(96, nIn, 3*hl), randn(97, hl, 3*hl), randn(98, 2, 3*hl), randn(99, bl, hl)), false},
		{"gru_reset_before_split_reverse", func() Op { return GRUOp(GRUAttrs{Offsets: long, Reverse: true}) },
			ins(randn(101, tl, nIn), randn(102, nIn, 3*hl), randn(103, hl, 3*hl), randn(104, 3*hl)), false},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			in := c.in
			if dt == tensor.Float32 {
				in = make([]*tensor.Tensor, len(c.in))
				for i, x := range c.in {
					in[i] = f32(x)
				}
			}
			run := func(procs int) []*tensor.Tensor {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				op := c.op()
				y, err := op.Forward(in)
				require.NoError(t, err)
				dy := randn(68, y.Shape()...)
				if dt == tensor.Float32 {
					dy = f32(dy)
				}
				need := make([]bool, len(in))
				for i := range need {
					need[i] = true
				}
				g, err := op.Backward(in, y, dy, need)
				require.NoError(t, err)
				return append([]*tensor.Tensor{y}, g...)
			}
			one, many := run(1), run(4)
			for i := range one {
				if c.exact {
					require.Equal(t, one[i].Raw(), many[i].Raw(), "%s %v output %d", c.name, dt, i)
					continue
				}
				tol := 1e-10
				if dt == tensor.Float32 {
					tol = 1e-3 // rounding carried through 17 steps back
				}
				requireClose(t, one[i], many[i], tol, tol)
			}
		}
	}
}

// split gives each core a contiguous run of sequences, covering the batch
// in order, with steps balanced to within the longest sequence; too small
// a batch, or one core, is not split.
func TestRNNSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct {
		lengths []int
		procs   int
		runs    int
	}{
		{lengths: []int{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, procs: 2, runs: 0},
		{lengths: []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, procs: 2, runs: 2},
		{lengths: []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, procs: 1, runs: 0},
		{lengths: []int{90, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, procs: 2, runs: 2},
		{lengths: []int{9, 40, 2, 7, 7, 33, 0, 12, 5, 5, 19, 28, 1, 4, 4, 8, 16, 3, 3, 30, 11, 6, 2, 2, 9, 14, 21, 0, 1, 7, 7, 8, 25}, procs: 3, runs: 3},
	} {
		runtime.GOMAXPROCS(c.procs)
		off := []int{0}
		for _, l := range c.lengths {
			off = append(off, off[len(off)-1]+l)
		}
		s, err := newRNNSchedule("lstm", nil, tensor.Zeros(tensor.Float32, off[len(off)-1], 1), off, false)
		require.NoError(t, err)
		runs := s.split()
		require.Len(t, runs, c.runs, "lengths %v on %d cores", c.lengths, c.procs)
		if c.runs == 0 {
			continue
		}
		longest, steps := s.len(s.order[0]), make([]int, len(runs))
		for i, r := range runs {
			require.Equal(t, i == 0, r[0] == 0)
			if i > 0 {
				require.Equal(t, runs[i-1][1], r[0], "runs are contiguous")
			}
			require.Greater(t, r[1], r[0])
			for j := r[0]; j < r[1]; j++ {
				steps[i] += s.len(s.order[j])
			}
		}
		require.Equal(t, len(c.lengths), runs[len(runs)-1][1])
		require.LessOrEqual(t, slices.Max(steps)-slices.Min(steps), longest, "steps per run %v", steps)
	}
}
