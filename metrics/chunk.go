package metrics

import (
	"fmt"
	"strings"
)

// Scheme is a chunk tagging scheme. A tag id packs a chunk type and a
// position tag as Paddle's chunk_eval does: id = type*Tags() + position,
// and every id whose type is the number of chunk types (the first being
// types*Tags()) is "outside" (O).
type Scheme int

// The schemes of Paddle's chunk_eval. Position tags in order: IOB: B, I;
// IOE: I, E; IOBES: B, I, E, S; Plain: one tag, each token its own chunk
// unless the next has the same type.
const (
	IOB Scheme = iota
	IOE
	IOBES
	Plain
)

// tags returns the scheme's position letters in id order.
func (s Scheme) tags() string {
	switch s {
	case IOB:
		return "BI"
	case IOE:
		return "IE"
	case IOBES:
		return "BIES"
	}
	return "X"
}

// Tags is the number of position tags per chunk type.
func (s Scheme) Tags() int { return len(s.tags()) }

func (s Scheme) String() string {
	switch s {
	case IOB:
		return "IOB"
	case IOE:
		return "IOE"
	case IOBES:
		return "IOBES"
	case Plain:
		return "plain"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// Chunk is a run of tokens [Begin, End] (End inclusive) of one chunk type.
type Chunk struct{ Begin, End, Type int }

// Chunks returns the chunks of one tag sequence, following chunk_eval's
// rules: a chunk ends where an O, a token of another type, or a position
// tag that cannot continue it (B or S after anything; anything after E or
// S) comes, and a chunk begins at a non-O token that does not continue the
// previous one. So an I after O begins a chunk, as in conlleval. In the
// plain scheme, which has no position letters, neighbours of one type join.
func (s Scheme) Chunks(tags []int, chunkTypes int) ([]Chunk, error) {
	n := s.Tags()
	if s < IOB || s > Plain || chunkTypes < 1 {
		return nil, fmt.Errorf("metrics: chunks: scheme %v with %d chunk types", s, chunkTypes)
	}
	pos := func(letter byte) int { return strings.IndexByte(s.tags(), letter) } // -1 when the scheme lacks it
	B, I, E, S := pos('B'), pos('I'), pos('E'), pos('S')
	var out []Chunk
	start, prevTag, prevType := -1, -1, chunkTypes
	for i, id := range tags {
		if id < 0 || id > chunkTypes*n {
			return nil, fmt.Errorf("metrics: chunks: tag id %d at %d outside [0, %d] (%d chunk types × %d %v tags, then O)", id, i, chunkTypes*n, chunkTypes, n, s)
		}
		tag, typ := id%n, min(id/n, chunkTypes)
		ends := prevType != chunkTypes && (typ == chunkTypes || typ != prevType ||
			tag == B || tag == S || prevTag == E || prevTag == S)
		begins := typ != chunkTypes && (prevType == chunkTypes || typ != prevType ||
			tag == B || tag == S || ((tag == I || tag == E) && (prevTag == E || prevTag == S)))
		if start >= 0 && ends {
			out = append(out, Chunk{start, i - 1, prevType})
			start = -1
		}
		if begins {
			start = i
		}
		prevTag, prevType = tag, typ
	}
	if start >= 0 {
		out = append(out, Chunk{start, len(tags) - 1, prevType})
	}
	return out, nil
}

// Encode turns string tags ("B-PER", "I-LOC", "O") into the scheme's ids,
// types naming the chunk types in id order. A tag whose position letter
// the scheme lacks or whose type is not in types is an error.
func (s Scheme) Encode(tags []string, types []string) ([]int, error) {
	index := make(map[string]int, len(types))
	for i, t := range types {
		index[t] = i
	}
	out := make([]int, len(tags))
	for i, tag := range tags {
		if tag == "O" {
			out[i] = len(types) * s.Tags()
			continue
		}
		letter, typ, ok := strings.Cut(tag, "-")
		if s == Plain {
			letter, typ, ok = "X", tag, true
		}
		p := strings.Index(s.tags(), letter)
		t, known := index[typ]
		if !ok || len(letter) != 1 || p < 0 || !known {
			return nil, fmt.Errorf("metrics: encode: tag %q at %d is not a %v tag of types %v", tag, i, s, types)
		}
		out[i] = t*s.Tags() + p
	}
	return out, nil
}

// ChunkCounts are chunk_eval's three counts.
type ChunkCounts struct {
	Inferred, Labeled, Correct int64
}

// PRF is chunk_eval's precision (correct/inferred), recall
// (correct/labeled) and F1, each 0 when its denominator (for F1: the
// correct count) is 0.
func (c ChunkCounts) PRF() PRF {
	var r PRF
	if c.Inferred > 0 {
		r.Precision = float64(c.Correct) / float64(c.Inferred)
	}
	if c.Labeled > 0 {
		r.Recall = float64(c.Correct) / float64(c.Labeled)
	}
	if c.Correct > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

// ChunkEval accumulates chunk_eval's counts over sequences, as Paddle's
// ChunkEvaluator does over batches: a predicted chunk is correct when a
// label chunk has the same span and type, and chunks of the excluded types
// count nowhere.
type ChunkEval struct {
	ChunkCounts
	scheme   Scheme
	types    int
	excluded map[int]bool
}

// NewChunkEval returns an evaluator for chunkTypes types tagged in scheme,
// not counting the chunk types in excluded.
func NewChunkEval(scheme Scheme, chunkTypes int, excluded ...int) (*ChunkEval, error) {
	if scheme < IOB || scheme > Plain || chunkTypes < 1 {
		return nil, fmt.Errorf("metrics: NewChunkEval: scheme %v with %d chunk types", scheme, chunkTypes)
	}
	ex := map[int]bool{}
	for _, t := range excluded {
		ex[t] = true
	}
	return &ChunkEval{scheme: scheme, types: chunkTypes, excluded: ex}, nil
}

// Add counts the chunks of one sequence: pred the model's tag ids, label
// the true ones, of one length.
func (c *ChunkEval) Add(pred, label []int) error {
	if len(pred) != len(label) {
		return fmt.Errorf("metrics: ChunkEval.Add: %d predicted tags and %d labels", len(pred), len(label))
	}
	pc, err := c.scheme.Chunks(pred, c.types)
	if err != nil {
		return fmt.Errorf("metrics: ChunkEval.Add: prediction: %w", err)
	}
	lc, err := c.scheme.Chunks(label, c.types)
	if err != nil {
		return fmt.Errorf("metrics: ChunkEval.Add: label: %w", err)
	}
	truth := make(map[Chunk]bool, len(lc))
	for _, ch := range lc {
		if !c.excluded[ch.Type] {
			truth[ch] = true
			c.Labeled++
		}
	}
	for _, ch := range pc {
		if !c.excluded[ch.Type] {
			c.Inferred++
			if truth[ch] {
				c.Correct++
			}
		}
	}
	return nil
}
