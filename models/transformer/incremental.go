package transformer

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Cache is the decoder state of incremental decoding: one
// layers.TransformerDecoderCache per decoder layer (fairseq's
// incremental_state). Step feeds only each row's newest token; Reorder
// selects rows for beam search. Step and ReorderCache are package decode's
// Step and Reorder for it.
type Cache struct {
	model  *Model
	layers []*layers.TransformerDecoderCache
	s      *session
}

// NewCache returns an empty cache for decoding up to maxLen tokens over
// memory [B, Tk, DModel] (Encode's output, on an inference tape) with the
// sources' lengths: each decoder layer projects the memory's keys and
// values once, here.
func (m *Model) NewCache(memory *graph.Value, lengths []int, maxLen int) (*Cache, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if maxLen > m.Cfg.MaxLen {
		return nil, fmt.Errorf("transformer: NewCache of %d positions; the model has %d", maxLen, m.Cfg.MaxLen)
	}
	s, err := m.newSession()
	if err != nil {
		return nil, err
	}
	c := &Cache{model: m, s: s}
	for i, l := range m.Decoder {
		lc, err := l.NewCache(memory, lengths, maxLen)
		if err != nil {
			return nil, fmt.Errorf("transformer: decoder layer %d: %w", i, err)
		}
		c.layers = append(c.layers, lc)
	}
	return c, nil
}

// Step feeds prev (one token per row of c) at the cache's next position
// and returns the log-probabilities [rows, Vocab] of the token after it;
// c itself, one position longer, is the next state (decode.Step). After
// an error the layers' caches may hold different lengths: start a new
// cache.
func Step(prev []int, c *Cache) (*tensor.Tensor, *Cache, error) {
	if c == nil || c.model == nil || c.s == nil || len(c.layers) == 0 {
		return nil, nil, errors.New("transformer: Step: cache not made by Model.NewCache")
	}
	if len(prev) != c.layers[0].Rows() {
		return nil, nil, fmt.Errorf("transformer: Step: %d tokens for a cache of %d rows", len(prev), c.layers[0].Rows())
	}
	ids := make([][]int, len(prev))
	for i, p := range prev {
		ids[i] = []int{p}
	}
	t := c.s.tape
	mark := t.Mark()
	x := c.model.embed(t, ids, c.layers[0].Len())
	for i, l := range c.model.Decoder {
		x = l.Step(x, c.layers[i])
	}
	lp, err := c.s.logProbs(c.model, x, mark)
	if err != nil {
		return nil, nil, fmt.Errorf("transformer: Step: %w", err)
	}
	return lp, c, nil
}

// ReorderCache keeps the rows parents of c, in that order, in every
// layer's cache (decode.Reorder).
func ReorderCache(c *Cache, parents []int) (*Cache, error) {
	if c == nil || len(c.layers) == 0 {
		return nil, errors.New("transformer: ReorderCache: cache not made by Model.NewCache")
	}
	for i, l := range c.layers {
		if err := l.Reorder(parents); err != nil {
			return nil, fmt.Errorf("transformer: decoder layer %d: %w", i, err)
		}
	}
	return c, nil
}
