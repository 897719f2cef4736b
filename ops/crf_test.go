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
