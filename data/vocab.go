package data

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/internal/readlimit"
)

// Special tokens the book's readers use.
const (
	Unk = "<unk>" // a word outside the vocabulary
	BOS = "<s>"   // start of a sentence
	EOS = "<e>"   // end of a sentence
	Pad = "<pad>" // padding
)

// Counter counts token occurrences to build a Vocab. The zero value is
// an empty counter ready to use.
type Counter struct {
	counts map[string]int
}

// Add counts each token once.
func (c *Counter) Add(tokens ...string) {
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	for _, t := range tokens {
		c.counts[t]++
	}
}

// Count is how often w was added.
func (c *Counter) Count(w string) int {
	if c == nil {
		return 0
	}
	return c.counts[w]
}

// Len is the number of distinct tokens added.
func (c *Counter) Len() int {
	if c == nil {
		return 0
	}
	return len(c.counts)
}

// VocabConfig chooses a Vocab's words and layout.
type VocabConfig struct {
	// MinCount keeps words seen at least this often. Paddle's "cutoff" c
	// (keep counts > c) is MinCount c+1.
	MinCount int
	// MaxWords keeps at most this many counted words (0: no limit), the
	// most frequent ones: the top-N vocabulary.
	MaxWords int
	// Specials come first, with ids 0, 1, ... in this order (for example
	// Pad, BOS, EOS, Unk as Paddle's WMT14 dictionaries put <s> <e> <unk>
	// first). They are never counted words.
	Specials []string
	// Unk is the token unknown words map to ("" for none: Encode then
	// reports unknown words as errors). When it is not among Specials it
	// is appended after the words, Paddle's IMDB and imikolov layout.
	Unk string
}

// Vocab maps tokens to dense ids 0..Len-1 and back.
type Vocab struct {
	words []string
	ids   map[string]int
	unk   int // -1 without an unknown token
}

// BuildVocab orders the counted words as Paddle's build_dict does, by
// descending count and then by the word's bytes for ties, so the result
// never depends on map order; keeps those with count >= MinCount, at most
// MaxWords of them; and lays out Specials, words and Unk as VocabConfig
// describes. Counts of the special and unknown tokens are ignored. A nil
// counter counts nothing.
func BuildVocab(counts *Counter, cfg VocabConfig) (*Vocab, error) {
	if cfg.MinCount < 0 || cfg.MaxWords < 0 {
		return nil, fmt.Errorf("data: BuildVocab: MinCount %d and MaxWords %d cannot be negative", cfg.MinCount, cfg.MaxWords)
	}
	special := map[string]bool{cfg.Unk: cfg.Unk != ""}
	for _, s := range cfg.Specials {
		special[s] = true
	}
	type wc struct {
		w string
		c int
	}
	var kept []wc
	if counts == nil {
		counts = &Counter{}
	}
	for w, c := range counts.counts {
		if !special[w] && c >= cfg.MinCount && c > 0 {
			kept = append(kept, wc{w, c})
		}
	}
	slices.SortFunc(kept, func(a, b wc) int {
		if a.c != b.c {
			return cmp.Compare(b.c, a.c)
		}
		return strings.Compare(a.w, b.w)
	})
	if cfg.MaxWords > 0 && len(kept) > cfg.MaxWords {
		kept = kept[:cfg.MaxWords]
	}
	words := slices.Clone(cfg.Specials)
	for _, k := range kept {
		words = append(words, k.w)
	}
	if cfg.Unk != "" && !slices.Contains(cfg.Specials, cfg.Unk) {
		words = append(words, cfg.Unk)
	}
	return NewVocab(words, cfg.Unk)
}

// NewVocab uses words as they are: word i gets id i. unk, when not "",
// must be one of them. Words must be distinct and free of line breaks (so
// that Save can write them one per line), and word 0 must not start with
// the gzip magic bytes (so that LoadVocab reads the saved file as text).
func NewVocab(words []string, unk string) (*Vocab, error) {
	v := &Vocab{words: slices.Clone(words), ids: make(map[string]int, len(words)), unk: -1}
	for i, w := range words {
		if strings.ContainsAny(w, "\r\n") {
			return nil, fmt.Errorf("data: vocab word %d %q holds a line break", i, w)
		}
		if i == 0 && strings.HasPrefix(w, string(fileio.GzipMagic)) {
			return nil, fmt.Errorf("data: vocab word 0 %q starts with the gzip magic bytes 1f 8b, so its saved file would read back as gzip", w)
		}
		if j, dup := v.ids[w]; dup {
			return nil, fmt.Errorf("data: vocab word %q at ids %d and %d", w, j, i)
		}
		v.ids[w] = i
	}
	if unk != "" {
		id, ok := v.ids[unk]
		if !ok {
			return nil, fmt.Errorf("data: vocab of %d words lacks its unknown token %q", len(words), unk)
		}
		v.unk = id
	}
	return v, nil
}

// Len is the number of ids.
func (v *Vocab) Len() int { return len(v.words) }

// Words returns the tokens in id order.
func (v *Vocab) Words() []string { return slices.Clone(v.words) }

// ID returns w's id, the unknown token's id for a word outside the
// vocabulary, or -1 when there is no unknown token.
func (v *Vocab) ID(w string) int {
	if id, ok := v.ids[w]; ok {
		return id
	}
	if v.unk >= len(v.words) { // a zero Vocab, not made by NewVocab
		return -1
	}
	return v.unk
}

// Has tells whether w is in the vocabulary.
func (v *Vocab) Has(w string) bool {
	_, ok := v.ids[w]
	return ok
}

// Require returns an error naming the first of tokens that v lacks (a
// reader that frames sentences as <s> words <e> needs both markers).
func (v *Vocab) Require(tokens ...string) error {
	if v == nil {
		return fmt.Errorf("nil vocabulary")
	}
	for _, t := range tokens {
		if !v.Has(t) {
			return fmt.Errorf("the vocabulary of %d words lacks %q", v.Len(), t)
		}
	}
	return nil
}

// UnkID is the unknown token's id, or -1.
func (v *Vocab) UnkID() int {
	if v.unk >= len(v.words) {
		return -1
	}
	return v.unk
}

// Word returns the token of id, or "" outside [0, Len).
func (v *Vocab) Word(id int) string {
	if id < 0 || id >= len(v.words) {
		return ""
	}
	return v.words[id]
}

// Encode maps tokens to ids (unknown words to the unknown token). Without
// an unknown token an unknown word is an error naming it.
func (v *Vocab) Encode(tokens []string) ([]int64, error) {
	ids := make([]int64, len(tokens))
	for i, t := range tokens {
		id := v.ID(t)
		if id < 0 {
			return nil, fmt.Errorf("data: token %d %q is not in the vocabulary and it has no unknown token", i, t)
		}
		ids[i] = int64(id)
	}
	return ids, nil
}

// Decode maps ids back to tokens; an id outside [0, Len) is an error.
func (v *Vocab) Decode(ids []int64) ([]string, error) {
	out := make([]string, len(ids))
	for i, id := range ids {
		if id < 0 || id >= int64(len(v.words)) {
			return nil, fmt.Errorf("data: id %d at %d outside the vocabulary [0, %d)", id, i, len(v.words))
		}
		out[i] = v.words[id]
	}
	return out, nil
}

// Save writes the tokens one per line in id order, the format of Paddle's
// dictionary files (verbDict.txt, wordDict.txt) that LoadVocab reads.
func (v *Vocab) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, word := range v.words {
		bw.WriteString(word)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Limits are the budgets of every reader of package data and of the
// corpus readers under data/ (see readlimit.Limits for each field and
// its default): a gzip input may expand at most MaxRatio times, a file
// MaxFileBytes, a line MaxLineBytes, and a call reads at most MaxRecords
// lines or records. A zero field takes its default; a reader's ...Limits
// variant takes raised ones.
type Limits = readlimit.Limits

// DefaultLimits returns the budgets that the readers apply when given
// none.
func DefaultLimits() Limits { return readlimit.Default() }

// LoadVocab reads a dictionary of one token per line, id = line number
// from 0, as Paddle's load_dict does: surrounding whitespace is trimmed
// (Python's str.strip). The input may be gzip-compressed. unk names the
// unknown token ("" for none), which must be in the file; a repeated token
// is an error naming both lines, found as the second arrives. It reads
// within DefaultLimits (see LoadVocabLimits).
func LoadVocab(r io.Reader, name, unk string) (*Vocab, error) {
	return LoadVocabLimits(r, name, unk, Limits{})
}

// LoadVocabLimits is LoadVocab within lim: the input may expand at most
// lim.MaxRatio times, hold lim.MaxFileBytes bytes, lim.MaxRecords tokens
// and lines of lim.MaxLineBytes.
func LoadVocabLimits(r io.Reader, name, unk string, lim Limits) (*Vocab, error) {
	r, err := fileio.Plain(r, name, lim)
	if err != nil {
		return nil, fmt.Errorf("data: vocab %w", err)
	}
	var words []string
	seen := map[string]int{}
	err = fileio.EachLine(r, name, lim, func(n int, line string) error {
		w := strings.TrimSpace(line)
		if prev, dup := seen[w]; dup {
			return fmt.Errorf("%s: token %q on lines %d and %d: want each token once", name, w, prev, n)
		}
		seen[w] = n
		words = append(words, w)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("data: vocab %w", err)
	}
	v, err := NewVocab(words, unk)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return v, nil
}
