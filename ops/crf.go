package ops

import (
	"math"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "crf", Inputs: []string{"emissions", "transitions", "start", "stop", "tags"}, Grads: []int{0, 1, 2, 3}})
}

// crfOp is the linear-chain CRF negative log-likelihood.
type crfOp struct {
	offsets []int
	// Saved by Forward for Backward, in float64.
	tags  []int
	alpha []float64 // forward log-scores [total, K]
	logZ  []float64 // per sequence
}

// CRFOp returns the op that computes, for each sequence b of a ragged batch
// of emission scores emissions [total, K] with the given offsets and gold
// tags [total] (int32 or int64 in [0, K)), the linear-chain CRF negative
// log-likelihood
//
//	nll_b = log Z_b - score_b(tags),
//	score(y) = start[y_0] + Σ_t emissions[t, y_t] + Σ_{t>0} transitions[y_{t-1}, y_t] + stop[y_{T-1}],
//
// where transitions[i, j] scores tag i followed by tag j and start and stop
// are separate [K] vectors (Paddle's linear_chain_crf keeps them as the
// first two rows of its transition parameter; tfa.text.crf_log_likelihood
// has none). log Z sums exp(score) over all K^T tag paths by the forward
// algorithm in log space, in float64 whatever the dtype. The output is the
// per-sequence NLL [B] (not the mean: take graph.Mean for a batch loss); an
// empty sequence has NLL 0 and passes no gradient back. The gradients are
// the expected feature counts minus the gold ones, from forward-backward
// marginals: emissions[t, k] gets P(y_t = k) - [tags_t = k], transitions[i,
// j] Σ_t P(y_{t-1} = i, y_t = j) - count(i→j), start and stop the first and
// last steps' marginals minus the gold one-hots. tags take no gradient.
func CRFOp(offsets []int) Op { return &crfOp{offsets: slices.Clone(offsets)} }

// CRFNegLogLikelihood returns each sequence's CRF negative log-likelihood
// [B]; see CRFOp.
func CRFNegLogLikelihood(emissions, transitions, start, stop, tags *tensor.Tensor, offsets []int) (*tensor.Tensor, error) {
	return run(CRFOp(offsets), emissions, transitions, start, stop, tags)
}

func (o *crfOp) Name() string { return "crf" }

// crfParams validates emissions [total, K], transitions [K, K], start [K]
// and stop [K] (in[:4], of one float dtype) and offsets for op, and returns
// them in float64.
func crfParams(op string, in []*tensor.Tensor, offsets []int) (e, tr, st, sp []float64, k int, err error) {
	for _, t := range in[:4] {
		if t.DType() != in[0].DType() || !t.DType().IsFloat() {
			return nil, nil, nil, nil, 0, Errorf(op, in, "want float32 or float64 emissions, transitions, start and stop of one dtype")
		}
	}
	if in[0].Rank() != 2 || in[0].Dim(1) < 1 {
		return nil, nil, nil, nil, 0, Errorf(op, in, "want emissions [total, K] with K >= 1")
	}
	k = in[0].Dim(1)
	if !in[1].Shape().Equal(tensor.Shape{k, k}) || !in[2].Shape().Equal(tensor.Shape{k}) || !in[3].Shape().Equal(tensor.Shape{k}) {
		return nil, nil, nil, nil, 0, Errorf(op, in, "want transitions [%d %d], start [%d] and stop [%d] for %d tags", k, k, k, k, k)
	}
	if err := checkOffsets(op, in, offsets, in[0].Dim(0)); err != nil {
		return nil, nil, nil, nil, 0, err
	}
	f := func(t *tensor.Tensor) []float64 {
		c, _ := t.Cast(tensor.Float64) // float to float cannot fail
		return c.Float64s()
	}
	return f(in[0]), f(in[1]), f(in[2]), f(in[3]), k, nil
}

func (o *crfOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("crf", in, 5); err != nil {
		return nil, err
	}
	e, tr, st, sp, k, err := crfParams("crf", in, o.offsets)
	if err != nil {
		return nil, err
	}
	total := in[0].Dim(0)
	tags, err := in[4].Ints()
	if err != nil || in[4].Rank() != 1 || len(tags) != total {
		return nil, Errorf("crf", in, "want int32 or int64 tags [%d]", total)
	}
	for t, y := range tags {
		if y < 0 || y >= k {
			return nil, Errorf("crf", in, "tag %d at step %d out of range [0, %d)", y, t, k)
		}
	}
	b := len(o.offsets) - 1
	o.tags, o.alpha, o.logZ = tags, make([]float64, total*k), make([]float64, b)
	nll := make([]float64, b)
	lse := make([]float64, k)
	for q := range b {
		s, end := o.offsets[q], o.offsets[q+1]
		if s == end {
			continue
		}
		a := o.alpha
		for j := range k {
			a[s*k+j] = st[j] + e[s*k+j]
		}
		for r := s + 1; r < end; r++ {
			for j := range k {
				for i := range k {
					lse[i] = a[(r-1)*k+i] + tr[i*k+j]
				}
				a[r*k+j] = logSumExpOf(lse) + e[r*k+j]
			}
		}
		for j := range k {
			lse[j] = a[(end-1)*k+j] + sp[j]
		}
		o.logZ[q] = logSumExpOf(lse)
		score := st[tags[s]] + sp[tags[end-1]]
		for r := s; r < end; r++ {
			score += e[r*k+tags[r]]
			if r > s {
				score += tr[tags[r-1]*k+tags[r]]
			}
		}
		nll[q] = o.logZ[q] - score
	}
	out := tensor.Zeros(in[0].DType(), b)
	for q, v := range nll {
		out.SetAt(q, v)
	}
	return out, nil
}

// logSumExpOf is log Σ exp(v), shifted by the maximum; -Inf for all -Inf.
func logSumExpOf(v []float64) float64 {
	m := slices.Max(v)
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

func (o *crfOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	e, tr, _, sp, k, _ := crfParams("crf", in, o.offsets)
	total := in[0].Dim(0)
	ge, gt, gs, gp := make([]float64, total*k), make([]float64, k*k), make([]float64, k), make([]float64, k)
	beta := make([]float64, total*k)
	lse := make([]float64, k)
	y, a := o.tags, o.alpha
	for q := range len(o.offsets) - 1 {
		s, end := o.offsets[q], o.offsets[q+1]
		if s == end {
			continue
		}
		g, z := gout.At(q), o.logZ[q]
		copy(beta[(end-1)*k:end*k], sp)
		for r := end - 2; r >= s; r-- {
			for i := range k {
				for j := range k {
					lse[j] = tr[i*k+j] + e[(r+1)*k+j] + beta[(r+1)*k+j]
				}
				beta[r*k+i] = logSumExpOf(lse)
			}
		}
		for r := s; r < end; r++ {
			for j := range k {
				p := math.Exp(a[r*k+j] + beta[r*k+j] - z)
				ge[r*k+j] = g * p
				if r == s {
					gs[j] += g * p
				}
				if r == end-1 {
					gp[j] += g * p
				}
				if r == s {
					continue
				}
				for i := range k {
					gt[i*k+j] += g * math.Exp(a[(r-1)*k+i]+tr[i*k+j]+e[r*k+j]+beta[r*k+j]-z)
				}
			}
			ge[r*k+y[r]] -= g
			if r > s {
				gt[y[r-1]*k+y[r]] -= g
			}
		}
		gs[y[s]] -= g
		gp[y[end-1]] -= g
	}
	grads := make([]*tensor.Tensor, 5)
	for i, d := range [][]float64{ge, gt, gs, gp} {
		if need[i] {
			grads[i] = tensor.ZerosLike(in[i])
			for j, v := range d {
				grads[i].SetAt(j, v)
			}
		}
	}
	return grads, nil
}

// ViterbiDecode returns, for each sequence of a ragged batch of emission
// scores [total, K] with the given offsets, the tag path of highest CRF
// score under transitions [K, K], start [K] and stop [K] (see CRFOp for the
// score), and that score (tfa.text.crf_decode, Paddle's crf_decoding, with
// separate start and stop weights). Ties go to the lower tag. An empty
// sequence has an empty path and score 0.
func ViterbiDecode(emissions, transitions, start, stop *tensor.Tensor, offsets []int) (paths [][]int, scores []float64, err error) {
	in := []*tensor.Tensor{emissions, transitions, start, stop}
	if err := checkArity("viterbi_decode", in, 4); err != nil {
		return nil, nil, err
	}
	e, tr, st, sp, k, err := crfParams("viterbi_decode", in, offsets)
	if err != nil {
		return nil, nil, err
	}
	b := len(offsets) - 1
	paths, scores = make([][]int, b), make([]float64, b)
	delta := make([]float64, len(e))
	back := make([]int, len(e))
	for q := range b {
		s, end := offsets[q], offsets[q+1]
		paths[q] = []int{}
		if s == end {
			continue
		}
		for j := range k {
			delta[s*k+j] = st[j] + e[s*k+j]
		}
		for r := s + 1; r < end; r++ {
			for j := range k {
				best := 0
				for i := 1; i < k; i++ {
					if delta[(r-1)*k+i]+tr[i*k+j] > delta[(r-1)*k+best]+tr[best*k+j] {
						best = i
					}
				}
				back[r*k+j] = best
				delta[r*k+j] = delta[(r-1)*k+best] + tr[best*k+j] + e[r*k+j]
			}
		}
		last := 0
		for j := 1; j < k; j++ {
			if delta[(end-1)*k+j]+sp[j] > delta[(end-1)*k+last]+sp[last] {
				last = j
			}
		}
		scores[q] = delta[(end-1)*k+last] + sp[last]
		path := make([]int, end-s)
		path[end-s-1] = last
		for r := end - 1; r > s; r-- {
			path[r-s-1] = back[r*k+path[r-s]]
		}
		paths[q] = path
	}
	return paths, scores, nil
}
