package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// SinusoidalPositions returns the Transformer's fixed position encodings
// [maxLen, d] (Vaswani et al. 2017, section 3.5):
//
//	PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
//
// in dtype dt (Float32 or Float64).
func SinusoidalPositions(maxLen, d int, dt tensor.DType) (*tensor.Tensor, error) {
	if maxLen <= 0 || d <= 0 {
		return nil, fmt.Errorf("layers: SinusoidalPositions: maxLen=%d d=%d must be positive", maxLen, d)
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("layers: SinusoidalPositions: dtype %v, want float32 or float64", dt)
	}
	pe := make([]float64, maxLen*d)
	for pos := range maxLen {
		for j := range d {
			angle := float64(pos) / math.Pow(10000, float64(j/2*2)/float64(d))
			if j%2 == 0 {
				pe[pos*d+j] = math.Sin(angle)
			} else {
				pe[pos*d+j] = math.Cos(angle)
			}
		}
	}
	return tensor.MustFromSlice(pe, maxLen, d).Cast(dt)
}

// PositionEmbedding adds a position's vector to each step of a padded
// batch [B, T, D]: Table [maxLen, D] is learned (BERT's and GPT's
// position embeddings; initialised normal with standard deviation 0.02 as
// BERT does) or, from NewSinusoidalPositionEmbedding, the fixed
// SinusoidalPositions, which is not trainable.
type PositionEmbedding struct {
	Table *graph.Param
}

// NewPositionEmbedding returns learned position embeddings for up to
// maxLen steps of d features, named name/embeddings.
func NewPositionEmbedding(name string, maxLen, d int, rng *rand.Rand, opts ...Option) (*PositionEmbedding, error) {
	c := newConfig(opts)
	if maxLen <= 0 || d <= 0 {
		return nil, fmt.Errorf("layers: position embedding %q: maxLen=%d d=%d must be positive", name, maxLen, d)
	}
	w, err := initializer.Normal(0.02)(rng, c.dtype, maxLen, d)
	if err != nil {
		return nil, fmt.Errorf("layers: position embedding %q: %w", name, err)
	}
	return &PositionEmbedding{Table: graph.NewParam(name+"/embeddings", w)}, nil
}

// NewSinusoidalPositionEmbedding returns the fixed encodings for up to
// maxLen steps of d features as a non-trainable parameter
// name/sinusoidal.
func NewSinusoidalPositionEmbedding(name string, maxLen, d int, opts ...Option) (*PositionEmbedding, error) {
	pe, err := SinusoidalPositions(maxLen, d, newConfig(opts).dtype)
	if err != nil {
		return nil, fmt.Errorf("layers: position embedding %q: %w", name, err)
	}
	return &PositionEmbedding{Table: graph.NewState(name+"/sinusoidal", pe)}, nil
}

// Forward returns x + Table[0:T] for x [B, T, D] (broadcast over the batch).
func (p *PositionEmbedding) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("position embedding", x)
	}
	if p == nil || p.Table == nil {
		return t.Fail(fmt.Errorf("layers: position embedding without its table (build it with its New function)"))
	}
	s := x.Shape()
	if s == nil {
		return x
	}
	if len(s) != 3 || s[1] > p.Table.Value.Dim(0) || s[2] != p.Table.Value.Dim(1) {
		return t.Fail(fmt.Errorf("layers: position embedding: x %v; want [B, T, %d] with T <= %d", s, p.Table.Value.Dim(1), p.Table.Value.Dim(0)))
	}
	pos := make([]int64, s[1])
	for i := range pos {
		pos[i] = int64(i)
	}
	ids := tensor.MustFromSlice(pos, len(pos))
	if dev := x.Device(); dev != nil { // the ids go where the table is
		var err error
		if ids, err = t.Move(ids, dev); err != nil {
			return t.Fail(fmt.Errorf("layers: position embedding: %w", err))
		}
	}
	return graph.Add(x, graph.Embedding(t.Param(p.Table), ids, ops.NoPadding))
}

// Params returns the table.
func (p *PositionEmbedding) Params() []*graph.Param {
	if p == nil {
		return nil
	}
	return []*graph.Param{p.Table}
}
