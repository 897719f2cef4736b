package ops

import (
	"slices"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "crf", Inputs: []string{"emissions", "transitions", "start", "stop", "tags"}, Grads: []int{0, 1, 2, 3},
		Make: MakeOp(func(a CRFAttrs) Op { return CRFOp(a.Offsets) }), CUDA: DeviceFallback})
}

// CRFAttrs are crf's attributes: the offsets of the ragged batch.
type CRFAttrs struct {
	Offsets []int `json:"offsets"`
}

// crfOp is the linear-chain CRF negative log-likelihood.
type crfOp struct {
	offsets []int
	// Saved by Forward for Backward.
	tags []int
	x    *crfScaled
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
// algorithm, in float64 whatever the dtype, in scaled exp space
// (crfScaled) with a log-space fallback, the sequences of the batch spread
// over the cores. The output is the per-sequence NLL [B] (not the mean:
// take graph.Mean for a batch loss); an empty sequence has NLL 0 and
// passes no gradient back. The gradients are the expected feature counts
// minus the gold ones, from forward-backward marginals: emissions[t, k]
// gets P(y_t = k) - [tags_t = k], transitions[i, j] Σ_t P(y_{t-1} = i,
// y_t = j) - count(i→j), start and stop the first and last steps'
// marginals minus the gold one-hots. tags take no gradient.
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

// crfWork is the multiply-adds of one pass over total steps of K tags,
// for par.Tasks.
func crfWork(total, k int) int { return total * k * k }

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
	x := newCRFScaled(e, tr, st, sp, k, o.offsets)
	par.Tasks(b, crfWork(total, k), func() func(int) {
		v := make([]float64, k)
		return func(q int) { x.forward(q, v) }
	})
	o.tags, o.x = tags, x
	out := tensor.Zeros(in[0].DType(), b)
	for q := range b {
		s, end := o.offsets[q], o.offsets[q+1]
		if s == end {
			continue
		}
		score := st[tags[s]] + sp[tags[end-1]]
		for r := s; r < end; r++ {
			score += e[r*k+tags[r]]
			if r > s {
				score += tr[tags[r-1]*k+tags[r]]
			}
		}
		out.SetAt(q, x.logZ[q]-score)
	}
	return out, nil
}

func (o *crfOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x, k, y := o.x, o.x.k, o.tags
	total, b := len(y), len(o.offsets)-1
	ge, w, gt, gs, gp := make([]float64, total*k), make([]float64, total*k), make([]float64, k*k), make([]float64, k), make([]float64, k)
	x.beta = make([]float64, total*k)
	logSpace := slices.Clone(x.logSpace)
	par.Tasks(b, 2*crfWork(total, k), func() func(int) {
		v := make([]float64, k)
		return func(q int) {
			if o.offsets[q] < o.offsets[q+1] && !logSpace[q] {
				logSpace[q] = !x.marginals(q, gout.At(q), ge, w, v)
			}
		}
	})
	alpha := x.alpha
	if slices.Contains(logSpace, true) {
		alpha = slices.Clone(x.alpha)
		for q, ls := range logSpace {
			s, end := o.offsets[q], o.offsets[q+1]
			if !ls || s == end {
				continue
			}
			if !x.logSpace[q] { // the forward pass was scaled: redo it in log space
				crfLogForward(x.e, x.tr, x.st, x.sp, k, s, end, alpha)
			}
			crfLogMarginals(x.e, x.tr, x.sp, k, s, end, alpha, x.logZ[q], gout.At(q), ge, gt, x.beta)
			clear(alpha[s*k : end*k])
			clear(w[s*k : end*k])
		}
	}
	if total > 1 { // Σ_r alpha[r-1]ᵀ w[r]: w is zero on each sequence's first step
		pair := make([]float64, k*k)
		gemm.Gemm(true, false, k, k, total-1, 1, alpha[:(total-1)*k], k, w[k:], k, 0, pair, k)
		for i, p := range pair {
			gt[i] += p * x.ex[i]
		}
	}
	for q := range b {
		s, end := o.offsets[q], o.offsets[q+1]
		if s == end {
			continue
		}
		g := gout.At(q)
		for j := range k {
			gs[j] += ge[s*k+j]
			gp[j] += ge[(end-1)*k+j]
		}
		for r := s; r < end; r++ {
			ge[r*k+y[r]] -= g
			if r > s {
				gt[y[r-1]*k+y[r]] -= g
			}
		}
		gs[y[s]] -= g
		gp[y[end-1]] -= g
	}
	x.beta = nil
	grads := make([]*tensor.Tensor, 5)
	for i, d := range [][]float64{ge, gt, gs, gp} {
		if need[i] {
			g, _ := tensor.FromSlice(d, in[i].Shape()...)
			grads[i], _ = g.Cast(in[i].DType())
		}
	}
	return grads, nil
}

// ViterbiDecode returns, for each sequence of a ragged batch of emission
// scores [total, K] with the given offsets, the tag path of highest CRF
// score under transitions [K, K], start [K] and stop [K] (see CRFOp for the
// score), and that score (tfa.text.crf_decode, Paddle's crf_decoding, with
// separate start and stop weights). Ties go to the lower tag. An empty
// sequence has an empty path and score 0. The sequences are decoded in
// parallel, each step as K rows of K candidate scores read in memory
// order.
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
	delta, pre := make([]float64, len(e)), make([]float64, len(e))
	par.Tasks(b, crfWork(len(e)/k, k), func() func(int) {
		return func(q int) {
			paths[q], scores[q] = viterbi(e, tr, st, sp, k, offsets[q], offsets[q+1], delta, pre)
		}
	})
	return paths, scores, nil
}

// viterbi decodes the rows [s, end) of e (see ViterbiDecode), with delta
// and pre as scratch [total, K]. The forward pass keeps only the best
// scores (pre: before the step's emissions are added):
// step r runs over the rows i of transitions, each adding delta[r-1, i]
// to the whole row and keeping the larger, a branch-free loop. The
// backtrack then finds the one predecessor it needs per step, the lowest
// tag i whose delta[r-1, i] + transitions[i, j] equals the best, from the
// same sums.
func viterbi(e, tr, st, sp []float64, k, s, end int, delta, pre []float64) ([]int, float64) {
	if s == end {
		return []int{}, 0
	}
	for j := range k {
		delta[s*k+j] = st[j] + e[s*k+j]
	}
	for r := s + 1; r < end; r++ {
		prev, d := delta[(r-1)*k:r*k], pre[r*k:(r+1)*k]
		copy(d, tr[:k])
		for j := range d {
			d[j] += prev[0]
		}
		for i := 1; i < k; i++ {
			pi, row := prev[i], tr[i*k:(i+1)*k]
			d := d[:len(row)]
			for j, t := range row {
				d[j] = max(d[j], pi+t)
			}
		}
		for j, x := range e[r*k : (r+1)*k] {
			delta[r*k+j] = d[j] + x
		}
	}
	last := 0
	for j := 1; j < k; j++ {
		if delta[(end-1)*k+j]+sp[j] > delta[(end-1)*k+last]+sp[last] {
			last = j
		}
	}
	path := make([]int, end-s)
	path[end-s-1] = last
	for r := end - 1; r > s; r-- {
		j := path[r-s]
		best := pre[r*k+j]
		i := 0
		for delta[(r-1)*k+i]+tr[i*k+j] != best {
			i++
		}
		path[r-s-1] = i
	}
	return path, delta[(end-1)*k+last] + sp[last]
}
