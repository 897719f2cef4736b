package text

import (
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// EndOfWord marks a word's last symbol (Sennrich et al. 2016, section 3.2:
// "a special end-of-word symbol '·'", written "</w>" by subword-nmt), so
// that a subword at the end of a word is a different token from the same
// letters inside one and the words come back when tokens are joined.
const EndOfWord = "</w>"

// The special tokens a BPE vocabulary starts with, ids 0 to 4: padding,
// sentence start and end, and the unknown symbol inside a word and at its
// end (so that a word ending in an unknown character still ends).
const (
	BPEPad        = "<pad>"
	BPEStart      = "<s>"
	BPEEnd        = "</s>"
	BPEUnknown    = "<unk>"
	BPEUnknownEnd = BPEUnknown + EndOfWord
)

var bpeSpecials = []string{BPEPad, BPEStart, BPEEnd, BPEUnknown, BPEUnknownEnd}

// Merge is one learned rule: the adjacent symbols Left and Right become
// the symbol Left+Right.
type Merge struct{ Left, Right string }

// BPE is a byte-pair-encoding subword tokenizer (Sennrich, Haddow and
// Birch 2016, "Neural Machine Translation of Rare Words with Subword
// Units", algorithm 1, as subword-nmt implements it): a word is split into
// its characters, the last one marked EndOfWord, and the learned merges
// are applied greedily by rank, always the adjacent pair whose merge was
// learned first, until none applies. Its vocabulary is the special tokens,
// the training alphabet (each character alone and marked as a word end)
// and one symbol per merge. A character outside the training alphabet is
// BPEUnknown.
type BPE struct {
	merges   []Merge
	rank     map[Merge]int
	alphabet []string
	tokens   []string
	ids      map[string]int
	cache    map[string][]string
}

// BPEConfig sets how LearnBPE learns.
type BPEConfig struct {
	// Merges is the most merges to learn (subword-nmt's --symbols).
	Merges int
	// MinCount stops learning when the most frequent pair is seen fewer
	// times (subword-nmt's --min-frequency; 0: 2).
	MinCount int
}

// LearnBPE learns merges on words, the training corpus's words with their
// counts (for a shared vocabulary, both languages' words counted
// together). Each step merges the most frequent adjacent pair of symbols,
// counted over every word times its count; ties go to the pair that sorts
// first (Left, then Right, as strings), so the result does not depend on
// map order. Learning stops after cfg.Merges merges or when the best pair
// is seen fewer than cfg.MinCount times.
func LearnBPE(words map[string]int, cfg BPEConfig) (*BPE, error) {
	if cfg.Merges < 0 || cfg.MinCount < 0 {
		return nil, fmt.Errorf("text: LearnBPE: merges %d and min count %d; want >= 0", cfg.Merges, cfg.MinCount)
	}
	if len(words) == 0 {
		return nil, errors.New("text: LearnBPE: no words to learn from")
	}
	minCount := cfg.MinCount
	if minCount == 0 {
		minCount = 2
	}
	l := &learner{pairs: map[Merge]int{}, where: map[Merge]map[int]struct{}{}}
	alpha := map[string]bool{}
	keys := make([]string, 0, len(words))
	for w, n := range words {
		if n < 0 {
			return nil, fmt.Errorf("text: LearnBPE: word %q counted %d times", w, n)
		}
		if w == "" || n == 0 {
			continue
		}
		if !utf8.ValidString(w) {
			return nil, fmt.Errorf("text: LearnBPE: word %q is not valid UTF-8", w)
		}
		if strings.Contains(w, EndOfWord) {
			return nil, fmt.Errorf("text: LearnBPE: word %q holds the end-of-word mark %s", w, EndOfWord)
		}
		keys = append(keys, w)
	}
	slices.Sort(keys)
	for _, w := range keys {
		syms := splitChars(w)
		for _, s := range syms {
			alpha[s] = true
		}
		l.words = append(l.words, syms)
		l.counts = append(l.counts, words[w])
	}
	for i := range l.words {
		l.add(i, 1)
	}
	for p, n := range l.pairs {
		heap.Push(&l.queue, pairCount{p, n})
	}
	var merges []Merge
	for len(merges) < cfg.Merges && l.queue.Len() > 0 {
		top := heap.Pop(&l.queue).(pairCount)
		if l.pairs[top.pair] != top.n {
			continue // a stale entry: the pair's count changed since it was pushed
		}
		if top.n < minCount {
			break
		}
		merges = append(merges, top.pair)
		l.merge(top.pair)
	}
	alphabet := make([]string, 0, len(alpha))
	for s := range alpha {
		alphabet = append(alphabet, s)
	}
	slices.Sort(alphabet)
	return NewBPE(alphabet, merges)
}

// NewBPE returns the tokenizer of an alphabet (single characters, each
// possibly followed by EndOfWord) and merges in rank order, as a BPE's
// Alphabet and Merges give them back. Every merge's halves must be
// symbols of the alphabet or of earlier merges.
func NewBPE(alphabet []string, merges []Merge) (*BPE, error) {
	b := &BPE{rank: make(map[Merge]int, len(merges)), ids: map[string]int{}, cache: map[string][]string{}}
	add := func(tok string) bool {
		if _, ok := b.ids[tok]; ok {
			return false
		}
		b.ids[tok] = len(b.tokens)
		b.tokens = append(b.tokens, tok)
		return true
	}
	for _, s := range bpeSpecials {
		add(s)
	}
	for _, a := range alphabet {
		c := strings.TrimSuffix(a, EndOfWord)
		if utf8.RuneCountInString(c) != 1 || !utf8.ValidString(c) {
			return nil, fmt.Errorf("text: NewBPE: alphabet symbol %q is not one character (and %s)", a, EndOfWord)
		}
		if !add(a) {
			return nil, fmt.Errorf("text: NewBPE: alphabet symbol %q twice", a)
		}
	}
	for i, m := range merges {
		if _, ok := b.ids[m.Left]; !ok || strings.HasSuffix(m.Left, EndOfWord) {
			return nil, fmt.Errorf("text: NewBPE: merge %d (%q %q): the left symbol is not an earlier symbol inside a word", i, m.Left, m.Right)
		}
		if _, ok := b.ids[m.Right]; !ok || slices.Contains(bpeSpecials, m.Right) {
			return nil, fmt.Errorf("text: NewBPE: merge %d (%q %q): the right symbol is not an earlier symbol", i, m.Left, m.Right)
		}
		if _, ok := b.rank[m]; ok {
			return nil, fmt.Errorf("text: NewBPE: merge %d (%q %q) repeats an earlier one", i, m.Left, m.Right)
		}
		b.rank[m] = i
		add(m.Left + m.Right) // two merges may make the same symbol
	}
	b.merges, b.alphabet = slices.Clone(merges), slices.Clone(alphabet)
	return b, nil
}

// Merges returns the learned merges in rank order.
func (b *BPE) Merges() []Merge {
	if b == nil {
		return nil
	}
	return slices.Clone(b.merges)
}

// Alphabet returns the training alphabet, sorted.
func (b *BPE) Alphabet() []string {
	if b == nil {
		return nil
	}
	return slices.Clone(b.alphabet)
}

// Tokens returns the vocabulary by id: the special tokens, the alphabet,
// then each merge's new symbol.
func (b *BPE) Tokens() []string {
	if b == nil {
		return nil
	}
	return slices.Clone(b.tokens)
}

// Len is the vocabulary's size.
func (b *BPE) Len() int {
	if b == nil {
		return 0
	}
	return len(b.tokens)
}

// ID returns tok's id; a token not in the vocabulary is BPEUnknownEnd
// when it ends a word, else BPEUnknown.
func (b *BPE) ID(tok string) int {
	if b == nil {
		return -1
	}
	if id, ok := b.ids[tok]; ok {
		return id
	}
	if strings.HasSuffix(tok, EndOfWord) {
		return b.ids[BPEUnknownEnd]
	}
	return b.ids[BPEUnknown]
}

// Segment splits one word into its subwords, the last marked EndOfWord.
// A character outside the alphabet stays a symbol of its own (which Encode
// maps to BPEUnknown). A word that holds EndOfWord itself does not come
// back whole from Detokenize (the words of Multi30k's Tokenize never do:
// the 13a rules split '<', '/' and '>'). Segmentations are cached, so a BPE must not be used
// from several goroutines at once.
func (b *BPE) Segment(word string) []string {
	if b == nil || word == "" {
		return nil
	}
	if s, ok := b.cache[word]; ok {
		return slices.Clone(s)
	}
	syms := splitChars(word)
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.rank[Merge{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if best < 0 {
			break
		}
		// Merge every occurrence of the best pair, left to right.
		m := b.merges[best]
		out := syms[:0:0]
		for i := 0; i < len(syms); i++ {
			if i >= at && i+1 < len(syms) && syms[i] == m.Left && syms[i+1] == m.Right {
				out = append(out, m.Left+m.Right)
				i++
				continue
			}
			out = append(out, syms[i])
		}
		syms = out
	}
	if len(b.cache) < maxBPECache {
		b.cache[word] = slices.Clone(syms)
	}
	return syms
}

// maxBPECache bounds the segmentation cache.
const maxBPECache = 1 << 18

// Tokenize segments each word of words.
func (b *BPE) Tokenize(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, b.Segment(w)...)
	}
	return out
}

// Encode returns the ids of words' subwords; unknown symbols are
// BPEUnknown's id.
func (b *BPE) Encode(words []string) []int {
	if b == nil {
		return nil
	}
	toks := b.Tokenize(words)
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = b.ID(t)
	}
	return ids
}

// Decode returns the words of ids: their tokens joined (Detokenize).
// Padding and the sentence marks are dropped; the unknown tokens stay, as
// "<unk>" in their word. An id outside the vocabulary is an error.
func (b *BPE) Decode(ids []int) ([]string, error) {
	if b == nil {
		return nil, errors.New("text: Decode of a nil BPE")
	}
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id >= len(b.tokens) {
			return nil, fmt.Errorf("text: BPE Decode: id %d outside the vocabulary of %d", id, len(b.tokens))
		}
		switch t := b.tokens[id]; t {
		case BPEPad, BPEStart, BPEEnd:
		default:
			toks = append(toks, t)
		}
	}
	return Detokenize(toks), nil
}

// Detokenize joins subwords back into words: a word ends at each token
// marked EndOfWord, and trailing tokens with no end mark (a translation
// cut short) make a last word.
func Detokenize(tokens []string) []string {
	var words []string
	var cur strings.Builder
	for _, t := range tokens {
		if w, ok := strings.CutSuffix(t, EndOfWord); ok {
			cur.WriteString(w)
			words = append(words, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(t)
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// splitChars is a word's characters, the last followed by EndOfWord.
func splitChars(w string) []string {
	syms := make([]string, 0, len(w))
	for i := 0; i < len(w); {
		_, n := utf8.DecodeRuneInString(w[i:])
		syms = append(syms, w[i:i+n])
		i += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1] += EndOfWord
	}
	return syms
}

// learner holds LearnBPE's state: the distinct words as symbol lists,
// their counts, the count of every adjacent pair and the words each pair
// occurs in, so that a merge revisits only the words it changes.
type learner struct {
	words  [][]string
	counts []int
	pairs  map[Merge]int
	where  map[Merge]map[int]struct{}
	queue  pairQueue
}

// add counts word i's pairs sign times (+1 or -1) its count.
func (l *learner) add(i, sign int) {
	syms := l.words[i]
	for j := 0; j+1 < len(syms); j++ {
		p := Merge{syms[j], syms[j+1]}
		l.pairs[p] += sign * l.counts[i]
		if sign > 0 {
			if l.where[p] == nil {
				l.where[p] = map[int]struct{}{}
			}
			l.where[p][i] = struct{}{}
		}
	}
}

// merge replaces pair p by its symbol in every word that has it and
// updates the pair counts, pushing each changed count on the queue.
func (l *learner) merge(p Merge) {
	ws := make([]int, 0, len(l.where[p]))
	for i := range l.where[p] {
		ws = append(ws, i)
	}
	slices.Sort(ws)
	changed := map[Merge]bool{}
	for _, i := range ws {
		syms := l.words[i]
		for j := 0; j+1 < len(syms); j++ {
			changed[Merge{syms[j], syms[j+1]}] = true
		}
		l.add(i, -1)
		out := make([]string, 0, len(syms))
		for j := 0; j < len(syms); j++ {
			if j+1 < len(syms) && syms[j] == p.Left && syms[j+1] == p.Right {
				out = append(out, p.Left+p.Right)
				j++
				continue
			}
			out = append(out, syms[j])
		}
		l.words[i] = out
		l.add(i, 1)
		for j := 0; j+1 < len(out); j++ {
			changed[Merge{out[j], out[j+1]}] = true
		}
	}
	delete(l.where, p)
	delete(l.pairs, p)
	for q := range changed {
		if n, ok := l.pairs[q]; ok && q != p {
			if n <= 0 {
				delete(l.pairs, q)
				continue
			}
			heap.Push(&l.queue, pairCount{q, n})
		}
	}
}

type pairCount struct {
	pair Merge
	n    int
}

// pairQueue is a max-heap of pair counts, ties to the pair that sorts
// first.
type pairQueue []pairCount

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].n != q[j].n {
		return q[i].n > q[j].n
	}
	if q[i].pair.Left != q[j].pair.Left {
		return q[i].pair.Left < q[j].pair.Left
	}
	return q[i].pair.Right < q[j].pair.Right
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pairCount)) }
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
