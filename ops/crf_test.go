package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// crfOffsets mixes lengths 3, 0, 1 and 4 (K=3, so brute force stays small).
var crfOffsets = []int{0, 3, 3, 4, 8}

func crfInputs(seed uint64) []*tensor.Tensor {
	return ins(randn(seed, 8, 3), randn(seed+1, 3, 3), randn(seed+2, 3), randn(seed+3, 3),
		tensor.MustFromSlice([]int64{2, 0, 1, 1, 0, 2, 2, 1}, 8))
}

var _ = addGradCases("crf",
	gradCase{name: "mixed", attrs: Attrs{Offsets: crfOffsets}, in: crfInputs(1), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "long_k2_int32", attrs: Attrs{Offsets: []int{0, 9}}, in: ins(randn(5, 9, 2), randn(6, 2, 2), randn(7, 2), randn(8, 2),
		tensor.MustFromSlice([]int32{0, 1, 1, 0, 0, 1, 0, 1, 1}, 9)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "k5", attrs: Attrs{Offsets: []int{0, 4, 4, 5, 11}}, in: crfInputsK(5), wrt: []int{0, 1, 2, 3}},
	// Scores far apart: the first sequence leaves the scaled kernel's range and runs in log space.
	gradCase{name: "underflow", attrs: Attrs{Offsets: []int{0, 2, 3}}, in: ins(
		tensor.MustFromSlice([]float64{0, -1000, -1000, 0, 3, -900}, 3, 2), tensor.MustFromSlice([]float64{0, -800, -800, 0}, 2, 2),
		tensor.MustFromSlice([]float64{0, 1}, 2), tensor.MustFromSlice([]float64{0.5, -0.5}, 2), tensor.MustFromSlice([]int64{0, 1, 1}, 3)),
		wrt: []int{0, 1, 2, 3}},
)

// pathScore is the CRF score of tag path y over emission rows e[r][k].
func pathScore(e [][]float64, tr, st, sp *tensor.Tensor, y []int) float64 {
	k := st.Dim(0)
	s := st.At(y[0]) + sp.At(y[len(y)-1])
	for t, tag := range y {
		s += e[t][tag]
		if t > 0 {
			s += tr.At(y[t-1]*k + tag)
		}
	}
	return s
}

// allPaths lists every tag path of length n over k tags.
func allPaths(n, k int) [][]int {
	paths := [][]int{{}}
	for range n {
		var next [][]int
		for _, p := range paths {
			for tag := range k {
				next = append(next, append(append([]int{}, p...), tag))
			}
		}
		paths = next
	}
	return paths
}

// The NLL is log Σ_paths exp(score) - score(gold), enumerated by brute force.
func TestCRFMatchesBruteForce(t *testing.T) {
	in := crfInputs(11)
	got, err := CRFNegLogLikelihood(in[0], in[1], in[2], in[3], in[4], crfOffsets)
	require.NoError(t, err)
	tags, _ := in[4].Ints()
	want := make([]float64, len(crfOffsets)-1)
	for b := range want {
		s, e := crfOffsets[b], crfOffsets[b+1]
		if s == e {
			continue
		}
		rows := seqRows(in[0], crfOffsets, b)
		z := 0.0
		for _, p := range allPaths(e-s, 3) {
			z += math.Exp(pathScore(rows, in[1], in[2], in[3], p))
		}
		want[b] = math.Log(z) - pathScore(rows, in[1], in[2], in[3], tags[s:e])
	}
	requireClose(t, tensor.MustFromSlice(want, len(want)), got, 1e-12, 1e-12)
	require.Zero(t, got.At(1), "an empty sequence has NLL 0")
	checkDTypes(t, func() Op { return CRFOp(crfOffsets) }, in...)
}

func TestViterbiMatchesBruteForce(t *testing.T) {
	for seed := uint64(20); seed < 25; seed++ {
		in := crfInputs(seed)
		paths, scores, err := ViterbiDecode(in[0], in[1], in[2], in[3], crfOffsets)
		require.NoError(t, err)
		require.Len(t, paths, 4)
		for b := range paths {
			s, e := crfOffsets[b], crfOffsets[b+1]
			if s == e {
				require.Empty(t, paths[b])
				require.Zero(t, scores[b])
				continue
			}
			rows := seqRows(in[0], crfOffsets, b)
			best, bestScore := []int(nil), math.Inf(-1)
			for _, p := range allPaths(e-s, 3) {
				if sc := pathScore(rows, in[1], in[2], in[3], p); sc > bestScore {
					best, bestScore = p, sc
				}
			}
			require.Equal(t, best, paths[b], "seed %d sequence %d", seed, b)
			require.InDelta(t, bestScore, scores[b], 1e-12)
		}
		// float32 inputs decode to the same paths.
		p32, _, err := ViterbiDecode(f32(in[0]), f32(in[1]), f32(in[2]), f32(in[3]), crfOffsets)
		require.NoError(t, err)
		require.Equal(t, paths, p32)
	}
}

// Large scores stay finite: the forward algorithm runs in log space.
func TestCRFLargeScoresStayFinite(t *testing.T) {
	e := tensor.MustFromSlice([]float32{1000, -1000, 999, 1001}, 2, 2)
	z := tensor.Zeros(tensor.Float32, 2)
	nll, err := CRFNegLogLikelihood(e, tensor.Zeros(tensor.Float32, 2, 2), z, z, tensor.MustFromSlice([]int64{0, 1}, 2), []int{0, 2})
	require.NoError(t, err)
	require.InDelta(t, math.Log(1+math.Exp(-2)), nll.At(0), 1e-5)
}

func TestCRFErrors(t *testing.T) {
	in := crfInputs(1)
	call := func(tags *tensor.Tensor, off []int, params ...*tensor.Tensor) error {
		_, err := CRFNegLogLikelihood(params[0], params[1], params[2], params[3], tags, off)
		return err
	}
	require.ErrorContains(t, call(tensor.MustFromSlice([]int64{2, 0, 1, 3, 0, 2, 2, 1}, 8), crfOffsets, in[:4]...),
		"crf: inputs float64[8 3], float64[3 3], float64[3], float64[3], int64[8]: tag 3 at step 3 out of range [0, 3)")
	require.ErrorContains(t, call(tensor.MustFromSlice([]int64{-1, 0, 1, 2, 0, 2, 2, 1}, 8), crfOffsets, in[:4]...), "tag -1 at step 0 out of range [0, 3)")
	require.ErrorContains(t, call(tensor.MustFromSlice([]int64{0, 1}, 2), crfOffsets, in[:4]...), "want int32 or int64 tags [8]")
	require.ErrorContains(t, call(f32(in[0]), crfOffsets, in[:4]...), "want int32 or int64 tags [8]")
	require.ErrorContains(t, call(in[4], crfOffsets, in[0], randn(1, 3, 2), in[2], in[3]), "want transitions [3 3], start [3] and stop [3] for 3 tags")
	require.ErrorContains(t, call(in[4], crfOffsets, in[0], in[1], f32(in[2]), in[3]), "want float32 or float64 emissions, transitions, start and stop of one dtype")
	require.ErrorContains(t, call(in[4], crfOffsets, randn(1, 8), in[1], in[2], in[3]), "want emissions [total, K] with K >= 1")
	require.ErrorContains(t, call(in[4], []int{0, 3, 9}, in[:4]...), "crf: inputs float64[8 3], float64[3 3], float64[3], float64[3], int64[8]: offsets [0 3 9] overrun the values")
	_, _, err := ViterbiDecode(in[0], in[1], in[2], in[3], []int{0, 5, 4, 8})
	require.ErrorContains(t, err, "viterbi_decode: inputs float64[8 3], float64[3 3], float64[3], float64[3]: offsets [0 5 4 8] decrease at 2: 4 after 5")
	_, _, err = ViterbiDecode(in[0], nil, in[2], in[3], crfOffsets)
	require.ErrorContains(t, err, "viterbi_decode: inputs float64[8 3], nil, float64[3], float64[3]: nil input")
	_, err = CRFNegLogLikelihood(in[0], in[1], in[2], in[3], nil, crfOffsets)
	require.ErrorContains(t, err, "crf: inputs float64[8 3], float64[3 3], float64[3], float64[3], nil: nil input")
}

// crfLogSpaceBatch is the CRF as it ran before the scaled kernel: every
// sequence forward and backward in log space, one after the other. It is
// the reference TestCRFScaledMatchesLogSpace and BenchmarkCRF hold the op
// to; it returns the NLLs and the gradients for output gradient g.
func crfLogSpaceBatch(in []*tensor.Tensor, offsets []int, g []float64) (nll, ge, gt, gs, gp []float64) {
	e, tr, st, sp, k, _ := crfParams("crf", in, offsets)
	y, _ := in[4].Ints()
	total := len(y)
	alpha, beta := make([]float64, total*k), make([]float64, total*k)
	nll, ge, gt, gs, gp = make([]float64, len(offsets)-1), make([]float64, total*k), make([]float64, k*k), make([]float64, k), make([]float64, k)
	for q := range nll {
		s, end := offsets[q], offsets[q+1]
		if s == end {
			continue
		}
		z := crfLogForward(e, tr, st, sp, k, s, end, alpha)
		score := st[y[s]] + sp[y[end-1]]
		for r := s; r < end; r++ {
			score += e[r*k+y[r]]
			if r > s {
				score += tr[y[r-1]*k+y[r]]
			}
		}
		nll[q] = z - score
		crfLogMarginals(e, tr, sp, k, s, end, alpha, z, g[q], ge, gt, beta)
		for j := range k {
			gs[j] += ge[s*k+j]
			gp[j] += ge[(end-1)*k+j]
		}
		for r := s; r < end; r++ {
			ge[r*k+y[r]] -= g[q]
			if r > s {
				gt[y[r-1]*k+y[r]] -= g[q]
			}
		}
		gs[y[s]] -= g[q]
		gp[y[end-1]] -= g[q]
	}
	return nll, ge, gt, gs, gp
}

// crfBatchInputs makes a CRF batch of K tags over sequences of the given
// lengths, emissions and transitions scaled by scale.
func crfBatchInputs(seed uint64, k int, scale float64, lengths ...int) ([]*tensor.Tensor, []int) {
	offsets := []int{0}
	for _, n := range lengths {
		offsets = append(offsets, offsets[len(offsets)-1]+n)
	}
	total := offsets[len(offsets)-1]
	rng := tensor.NewRNG(seed)
	tags := make([]int64, total)
	for i := range tags {
		tags[i] = int64(rng.IntN(k))
	}
	mul := func(t *tensor.Tensor) *tensor.Tensor {
		for i := range t.Size() {
			t.SetAt(i, scale*t.At(i))
		}
		return t
	}
	return ins(mul(randn(seed, total, k)), mul(randn(seed+1, k, k)), randn(seed+2, k), randn(seed+3, k),
		tensor.MustFromSlice(tags, total)), offsets
}

// The scaled kernel gives the log-space kernel's NLL and gradients, at
// the SRL model's 109 tags with scores of several magnitudes, and on
// scores that drive it out of range (where it falls back to log space).
func TestCRFScaledMatchesLogSpace(t *testing.T) {
	extreme := ins(tensor.MustFromSlice([]float64{0, -1000, -1000, 0, 3, -900}, 3, 2),
		tensor.MustFromSlice([]float64{0, -800, -800, 0}, 2, 2), tensor.MustFromSlice([]float64{0, 1}, 2),
		tensor.MustFromSlice([]float64{0.5, -0.5}, 2), tensor.MustFromSlice([]int64{0, 1, 1}, 3))
	big, bigOff := crfBatchInputs(3, 109, 1, 1, 30, 0, 7, 52)
	huge, hugeOff := crfBatchInputs(4, 109, 40, 12, 2, 25)
	cases := []struct {
		name     string
		in       []*tensor.Tensor
		offsets  []int
		logSpace []bool
	}{
		{"k109_unit", big, bigOff, []bool{false, false, false, false, false}},
		{"k109_scale40", huge, hugeOff, []bool{false, false, false}},
		{"k5_mixed", crfInputsK(5), []int{0, 4, 4, 5, 11}, []bool{false, false, false, false}},
		{"underflow", extreme, []int{0, 2, 3}, []bool{true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := len(c.offsets) - 1
			g := make([]float64, b)
			for q := range g {
				g[q] = 0.5 + float64(q)
			}
			op := CRFOp(c.offsets).(*crfOp)
			nll, err := op.Forward(c.in)
			require.NoError(t, err)
			require.Equal(t, c.logSpace, op.x.logSpace)
			grads, err := op.Backward(c.in, nll, tensor.MustFromSlice(g, b), []bool{true, true, true, true, false})
			require.NoError(t, err)
			wantNLL, ge, gt, gs, gp := crfLogSpaceBatch(c.in, c.offsets, g)
			requireClose(t, tensor.MustFromSlice(wantNLL, b), nll, 1e-9, 1e-11)
			for i, want := range [][]float64{ge, gt, gs, gp} {
				for j, v := range want {
					require.False(t, math.IsNaN(grads[i].At(j)), "input %d element %d", i, j)
					require.InDelta(t, v, grads[i].At(j), 1e-9*(1+math.Abs(v)), "input %d element %d", i, j)
				}
			}
		})
	}
}

// crfInputsK is a batch of 11 steps over k tags with random tags.
func crfInputsK(k int) []*tensor.Tensor {
	in, _ := crfBatchInputs(9, k, 2, 11)
	return in
}

// BenchmarkCRF times the CRF loss forward and backward and the Viterbi
// decode on a batch of 10 sequences of SRL-like lengths (mean 26) at the
// SRL model's 109 tags: the scaled exp-space op against the log-space
// kernel it replaced.
func BenchmarkCRF(b *testing.B) {
	in, offsets := crfBatchInputs(1, 109, 1, 22, 31, 9, 40, 26, 18, 35, 27, 14, 38)
	g := make([]float64, len(offsets)-1)
	for q := range g {
		g[q] = 1
	}
	gout := tensor.MustFromSlice(g, len(g))
	b.Run("logspace", func(b *testing.B) {
		for b.Loop() {
			crfLogSpaceBatch(in, offsets, g)
		}
	})
	b.Run("scaled", func(b *testing.B) {
		for b.Loop() {
			op := CRFOp(offsets)
			nll, _ := op.Forward(in)
			if _, err := op.Backward(in, nll, gout, []bool{true, true, true, true, false}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("viterbi", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ViterbiDecode(in[0], in[1], in[2], in[3], offsets); err != nil {
				b.Fatal(err)
			}
		}
	})
}
