package text

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// WordCounts counts words as a WordPiece tokenizer sees them: each text
// normalised and split at whitespace and punctuation by the tokenizer's
// rules (cfg, as WordPiece.IDs does), so that a vocabulary learned from
// the counts covers exactly the words the tokenizer will look up.
type WordCounts struct {
	cfg    WordPieceConfig
	counts map[string]int
}

// NewWordCounts returns empty counts for a tokenizer configured by cfg.
func NewWordCounts(cfg WordPieceConfig) *WordCounts {
	return &WordCounts{cfg: cfg, counts: map[string]int{}}
}

// Add counts the words of s.
func (c *WordCounts) Add(s string) {
	if c == nil {
		return
	}
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	lower := !c.cfg.Cased
	bertPreTokenize(bertNormalize(s, !c.cfg.NoChineseSplit, lower && !c.cfg.KeepAccents, lower), func(word string) {
		c.counts[word]++
	})
}

// Len returns the number of distinct words counted.
func (c *WordCounts) Len() int {
	if c == nil {
		return 0
	}
	return len(c.counts)
}

// LearnOptions size a learned WordPiece vocabulary.
type LearnOptions struct {
	// Size is the vocabulary's size, special tokens and the alphabet
	// included.
	Size int
	// MinCount leaves out words seen fewer times (0: 2), so that typing
	// errors and one-off names do not spend the vocabulary.
	MinCount int
	// Special are the tokens placed first, in order (nil: [PAD], [UNK],
	// [CLS], [SEP], [MASK], BERT's; [PAD] is then id 0).
	Special []string
}

// DefaultSpecial are BERT's special tokens in the order LearnWordPiece
// places them when LearnOptions.Special is nil.
var DefaultSpecial = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// maxLearnWordChars bounds the words the pieceLearner splits into characters,
// the tokenizer's default MaxWordChars: a longer word is [UNK] to the
// tokenizer whatever the vocabulary holdsPair.
const maxLearnWordChars = 100

// LearnWordPiece learns a WordPiece vocabulary of opt.Size tokens from
// the counts by the criterion of Schuster and Nakajima (2012) that
// WordPiece (Wu et al. 2016) takes its name from: every word starts as
// its characters, the first as itself and the others as "##c" pieces;
// then, until the vocabulary is full, the adjacent pair of pieces (x, y)
// whose merging into one piece (y's "##" dropped) most raises the
// likelihood of the counted words under a unigram model of the pieces
// becomes that piece. With n the pieces' counts (weighted by how often
// each word occurs) and N their total, merging the n_xy occurrences of
// x·y changes the log-likelihood Σ n_s·log(n_s/N) by
//
//	f(n_xy) + f(n_x − n_xy) + f(n_y − n_xy) − f(n_x) − f(n_y) + (other pieces' total)·log(N/N')
//
// with f(n) = n·log(n/N') after the merge (N' = N − n_xy) and n·log(n/N)
// before, which LearnWordPiece computes exactly for every pair. (The
// ratio n_xy/(n_x·n_y) often given as WordPiece's score leaves out how
// many pieces a merge saves and spends the vocabulary on rare words.)
// Ties go to the more frequent pair, then to the smaller pair in byte
// order, so the result is deterministic.
//
// The vocabulary lists the special tokens, then the alphabet (every
// character and "##" character of the counted words, by descending count),
// then the merged pieces in the order they were made. Its tokens feed
// NewWordPiece directly; greedy longest-match splitting then reproduces
// the learned pieces.
func LearnWordPiece(c *WordCounts, opt LearnOptions) ([]string, error) {
	if c == nil || len(c.counts) == 0 {
		return nil, errors.New("text: LearnWordPiece: no words counted")
	}
	special := opt.Special
	if special == nil {
		special = DefaultSpecial
	}
	minCount := cmp.Or(opt.MinCount, 2)
	if minCount < 1 {
		return nil, fmt.Errorf("text: LearnWordPiece: MinCount %d, want at least 1", opt.MinCount)
	}
	l := newPieceLearner()
	words := make([]string, 0, len(c.counts))
	for w, n := range c.counts {
		if n >= minCount && utf8.RuneCountInString(w) <= maxLearnWordChars {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("text: LearnWordPiece: none of the %d distinct words is seen %d times or more", len(c.counts), minCount)
	}
	slices.Sort(words) // a map's order would make the symbol ids, and so ties, vary
	for _, w := range words {
		l.addWord(w, c.counts[w])
	}
	alphabet := l.alphabet()
	if need := len(special) + len(alphabet); opt.Size < need {
		return nil, fmt.Errorf("text: LearnWordPiece: Size %d is below the %d special tokens and %d characters of the alphabet (%d)", opt.Size, len(special), len(alphabet), need)
	}
	vocab := slices.Clone(special)
	for _, s := range alphabet {
		vocab = append(vocab, l.names[s])
	}
	for len(vocab) < opt.Size {
		p, ok := l.best()
		if !ok {
			break
		}
		if name, isNew := l.merge(p); isNew && !slices.Contains(special, name) {
			vocab = append(vocab, name)
		}
	}
	return vocab, nil
}

// piecePair is two adjacent pieces, by id. A pair's count is of occurrences
// that do not overlap, those a merge joins.
type piecePair struct{ a, b int32 }

// pieceLearner holdsPair the words as sequences of piece ids, how often each piece
// and each adjacent pair occurs (weighted by word counts), and which words
// hold each pair (a list that may name a word more than once or one that
// no longer holdsPair it: merge checks).
type pieceLearner struct {
	ids      map[string]int32
	names    []string
	pieceN   []int
	words    [][]int32
	freq     []int
	pairN    map[piecePair]int
	holders  map[piecePair][]int32
	total    int     // every piece's count, summed
	seen     []int32 // the merge that last visited each word
	mergeNum int32
}

func newPieceLearner() *pieceLearner {
	return &pieceLearner{ids: map[string]int32{}, pairN: map[piecePair]int{}, holders: map[piecePair][]int32{}}
}

// piece returns the id of a piece, making one.
func (l *pieceLearner) piece(name string) int32 {
	if id, ok := l.ids[name]; ok {
		return id
	}
	id := int32(len(l.names))
	l.ids[name] = id
	l.names = append(l.names, name)
	l.pieceN = append(l.pieceN, 0)
	return id
}

func (l *pieceLearner) addWord(w string, n int) {
	seq := make([]int32, 0, len(w))
	for i, r := range w {
		name := string(r)
		if i > 0 {
			name = "##" + name
		}
		seq = append(seq, l.piece(name))
	}
	idx := int32(len(l.words))
	l.words, l.freq, l.seen = append(l.words, seq), append(l.freq, n), append(l.seen, 0)
	l.count(idx, +1)
}

// count adds (sign +1) or removes (−1) word idx's pieces and pairs from
// the totals; adding also records the word as a holder of its pairs.
func (l *pieceLearner) count(idx int32, sign int) {
	seq, n := l.words[idx], sign*l.freq[idx]
	l.total += n * len(seq)
	overlaps := false // x·x·x holdsPair one x·x that merges, not two
	for i, s := range seq {
		l.pieceN[s] += n
		if i == 0 {
			continue
		}
		p := piecePair{seq[i-1], s}
		if p.a == p.b && overlaps {
			overlaps = false
			continue
		}
		overlaps = p.a == p.b
		if c := l.pairN[p] + n; c > 0 {
			l.pairN[p] = c
		} else {
			delete(l.pairN, p)
		}
		if sign > 0 {
			l.holders[p] = append(l.holders[p], idx)
		}
	}
}

// alphabet returns the single-character pieces by descending count, then
// by name.
func (l *pieceLearner) alphabet() []int32 {
	ids := make([]int32, len(l.names))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(x, y int32) int {
		return cmp.Or(cmp.Compare(l.pieceN[y], l.pieceN[x]), strings.Compare(l.names[x], l.names[y]))
	})
	return ids
}

// best returns the pair whose merge gains the most likelihood, if any
// pair is left.
func (l *pieceLearner) best() (piecePair, bool) {
	var top piecePair
	var topN int
	topGain, found := 0.0, false
	for p, n := range l.pairN {
		gain := l.gain(p, n)
		if !found || gain > topGain || (gain == topGain && (n > topN || (n == topN && l.less(p, top)))) {
			top, topN, topGain, found = p, n, gain, true
		}
	}
	return top, found
}

// gain is the change in the unigram log-likelihood of the words when the
// n occurrences of p become one piece (LearnWordPiece's formula).
func (l *pieceLearner) gain(p piecePair, n int) float64 {
	total := float64(l.total)
	after := total - float64(n)
	f := func(c, of float64) float64 {
		if c <= 0 {
			return 0
		}
		return c * math.Log(c/of)
	}
	nx, ny, nxy := float64(l.pieceN[p.a]), float64(l.pieceN[p.b]), float64(n)
	if p.a == p.b { // x·x: one piece loses two occurrences per merge
		rest := total - nx
		return f(nxy, after) + f(nx-2*nxy, after) - f(nx, total) + rest*math.Log(total/after)
	}
	rest := total - nx - ny
	return f(nxy, after) + f(nx-nxy, after) + f(ny-nxy, after) - f(nx, total) - f(ny, total) + rest*math.Log(total/after)
}

// less orders pairs by their pieces' names, for ties.
func (l *pieceLearner) less(p, q piecePair) bool {
	return cmp.Or(strings.Compare(l.names[p.a], l.names[q.a]), strings.Compare(l.names[p.b], l.names[q.b])) < 0
}

// merge joins every occurrence of p into one piece and returns its name
// and whether no earlier merge made the same piece (x·yz and xy·z both
// make xyz).
func (l *pieceLearner) merge(p piecePair) (string, bool) {
	name := l.names[p.a] + strings.TrimPrefix(l.names[p.b], "##")
	_, had := l.ids[name]
	joined := l.piece(name)
	l.mergeNum++
	holders := l.holders[p]
	delete(l.holders, p)
	for _, idx := range holders {
		if l.seen[idx] == l.mergeNum {
			continue
		}
		l.seen[idx] = l.mergeNum
		seq := l.words[idx]
		if !holdsPair(seq, p) {
			continue
		}
		l.count(idx, -1)
		out := seq[:0]
		for i := 0; i < len(seq); i++ {
			if i+1 < len(seq) && seq[i] == p.a && seq[i+1] == p.b {
				out = append(out, joined)
				i++
				continue
			}
			out = append(out, seq[i])
		}
		l.words[idx] = out
		l.count(idx, +1)
	}
	return name, !had
}

// holdsPair reports whether seq has p as adjacent pieces.
func holdsPair(seq []int32, p piecePair) bool {
	for i := 1; i < len(seq); i++ {
		if seq[i-1] == p.a && seq[i] == p.b {
			return true
		}
	}
	return false
}
