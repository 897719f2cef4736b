package transformer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Prefixes is the decoder state of decoding without a cache: each row's
// tokens so far and its memory row. Every StepPrefixes runs the whole
// decoder over the prefixes (Decode) and keeps the last position's
// output, the work a cache saves; it is the reference Cache is checked and
// timed against.
type Prefixes struct {
	model   *Model
	s       *session
	memory  *tensor.Tensor // [rows, Tk, DModel]
	lengths []int
	tokens  [][]int
}

// NewPrefixes returns empty prefixes over memory [B, Tk, DModel] with the
// sources' lengths.
func (m *Model) NewPrefixes(memory *graph.Value, lengths []int) (*Prefixes, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if memory == nil {
		return nil, errors.New("transformer: NewPrefixes: nil memory")
	}
	mem, err := memory.Host()
	if err != nil {
		return nil, fmt.Errorf("transformer: NewPrefixes: %w", err)
	}
	if mem.Rank() != 3 || len(lengths) != mem.Dim(0) {
		return nil, fmt.Errorf("transformer: NewPrefixes: memory %v with %d lengths; want [B, Tk, D] and B lengths", mem.Shape(), len(lengths))
	}
	s, err := m.newSession()
	if err != nil {
		return nil, err
	}
	return &Prefixes{model: m, s: s, memory: mem, lengths: slices.Clone(lengths), tokens: make([][]int, len(lengths))}, nil
}

// StepPrefixes appends prev to the prefixes, runs the decoder over them
// and returns the log-probabilities [rows, Vocab] of the next token and
// the longer prefixes (decode.Step). Only the last position goes through
// the output projection, as with the cache.
func StepPrefixes(prev []int, p *Prefixes) (*tensor.Tensor, *Prefixes, error) {
	if p == nil || p.model == nil || p.s == nil || p.memory == nil {
		return nil, nil, errors.New("transformer: StepPrefixes: prefixes not made by Model.NewPrefixes")
	}
	if len(prev) != len(p.tokens) {
		return nil, nil, fmt.Errorf("transformer: StepPrefixes: %d tokens for %d rows", len(prev), len(p.tokens))
	}
	next := &Prefixes{model: p.model, s: p.s, memory: p.memory, lengths: p.lengths, tokens: make([][]int, len(prev))}
	for i, tok := range prev {
		next.tokens[i] = append(slices.Clone(p.tokens[i]), tok)
	}
	t := p.s.tape
	mark := t.Mark()
	states := p.model.decodeStates(next.tokens, t.Const(p.memory), p.lengths)
	n := len(next.tokens[0])
	lp, err := p.s.logProbs(p.model, graph.Slice(states, 1, n-1, n), mark)
	if err != nil {
		return nil, nil, fmt.Errorf("transformer: StepPrefixes: %w", err)
	}
	return lp, next, nil
}

// ReorderPrefixes keeps the rows parents of p, in that order (decode.Reorder).
func ReorderPrefixes(p *Prefixes, parents []int) (*Prefixes, error) {
	if p == nil || p.memory == nil || p.s == nil {
		return nil, errors.New("transformer: ReorderPrefixes: prefixes not made by Model.NewPrefixes")
	}
	idx := make([]int64, len(parents))
	out := &Prefixes{model: p.model, s: p.s, lengths: make([]int, len(parents)), tokens: make([][]int, len(parents))}
	for i, r := range parents {
		if r < 0 || r >= len(p.tokens) {
			return nil, fmt.Errorf("transformer: ReorderPrefixes: row %d of %d", r, len(p.tokens))
		}
		idx[i], out.lengths[i], out.tokens[i] = int64(r), p.lengths[r], p.tokens[r]
	}
	mem, err := ops.Gather(p.memory, tensor.MustFromSlice(idx, len(idx)), 0)
	if err != nil {
		return nil, fmt.Errorf("transformer: ReorderPrefixes: %w", err)
	}
	out.memory = mem
	return out, nil
}
