package transformer

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// session is what the steps of one decoding share, with or without the
// cache: an inference tape whose step values each step releases
// (graph.Tape.ReleaseSince) while the layers' weights stay packed for the
// GEMM from their second use on (graph.Linear), and the tied output
// projection's weights Eᵀ [DModel, Vocab], transposed and packed once
// (ops.PackWeights) instead of at every step. The weights must not change
// while a decoding runs.
type session struct {
	tape *graph.Tape
	outT *tensor.Tensor
	out  *ops.PackedWeights
}

func (m *Model) newSession() (*session, error) {
	t := graph.NewEvalTape()
	outT, err := graph.Transpose(t.Param(m.Emb.Table), 1, 0).Tensor()
	if err != nil {
		return nil, fmt.Errorf("transformer: output projection: %w", err)
	}
	outT = outT.Clone()
	p, err := ops.PackWeights(outT)
	if err != nil {
		return nil, fmt.Errorf("transformer: output projection: %w", err)
	}
	t.Release()
	return &session{tape: t, outT: outT, out: p}, nil
}

// logProbs returns log softmax(norm(y)·Eᵀ + b) [rows, Vocab] for the
// decoder outputs y [rows, 1, DModel] (the final norm with pre-norm),
// then releases the step's values.
func (s *session) logProbs(m *Model, y *graph.Value, mark int) (*tensor.Tensor, error) {
	t := s.tape
	if m.DecNorm != nil {
		y = m.DecNorm.Forward(y)
	}
	if sh := y.Shape(); sh != nil {
		y = graph.Reshape(y, sh[0], -1)
	}
	logits := t.Apply(ops.LinearPackedOp(s.out), y, t.Const(s.outT), t.Param(m.Out.Bias))
	lp, err := graph.LogSoftmax(logits, -1).Tensor()
	if rerr := t.ReleaseSince(mark); err == nil && rerr != nil {
		err = rerr
	}
	return lp, err
}
