package text

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WordPieceConfig sets a WordPiece tokenizer's normalisation and special
// tokens. The zero value is bert-base-uncased's: lower-cased, accents
// stripped, CJK ideographs split, words over 100 characters [UNK].
type WordPieceConfig struct {
	// Cased keeps the case (BertTokenizer's do_lower_case=False); a cased
	// tokenizer also keeps accents.
	Cased bool
	// KeepAccents keeps accents on an uncased tokenizer
	// (strip_accents=False).
	KeepAccents bool
	// NoChineseSplit leaves CJK ideographs inside words
	// (tokenize_chinese_chars=False).
	NoChineseSplit bool
	// MaxWordChars is the longest word, in characters, that WordPiece
	// splits; a longer one is the unknown token (0: 100).
	MaxWordChars int
	// The special tokens; empty means "[UNK]", "[CLS]" and "[SEP]".
	Unknown, CLS, SEP string
}

// WordPiece is BERT's tokenizer (Devlin et al. 2019; Wu et al. 2016's
// WordPiece) as Hugging Face tokenizers implements it for transformers'
// BertTokenizer: the text is cleaned and normalised (bertNormalize), split
// into words at whitespace and punctuation (bertPreTokenize), and each
// word is split greedily into the longest vocabulary entries from its
// start, entries after the first prefixed "##"; a word that cannot be
// split, or that is longer than MaxWordChars, is the unknown token.
type WordPiece struct {
	cfg           WordPieceConfig
	vocab         map[string]int
	tokens        []string
	unk, cls, sep int
}

// Limits on a vocabulary file: BERT's are about 230 KB (30,522 lines),
// multilingual ones about 1 MB.
const (
	maxVocabBytes     = 64 << 20
	maxVocabLineBytes = 1 << 10
)

// ReadWordPiece reads vocab.txt, one token a line whose line number (from
// 0) is its id, as BertTokenizer's vocab_file (trailing whitespace is
// trimmed; a token listed twice takes its last line's id, as a Python dict
// or Rust map built in order does). The file may be at most 64 MiB, each
// line at most 1 KiB.
func ReadWordPiece(path string, cfg WordPieceConfig) (*WordPiece, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("text: ReadWordPiece: %w", err)
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(io.LimitReader(f, maxVocabBytes+1))
	sc.Buffer(make([]byte, 0, 256), maxVocabLineBytes)
	read := 0
	for sc.Scan() {
		read += len(sc.Bytes()) + 1
		if read > maxVocabBytes+1 {
			return nil, fmt.Errorf("text: ReadWordPiece %s: over %d bytes", path, maxVocabBytes)
		}
		tokens = append(tokens, strings.TrimRightFunc(sc.Text(), unicode.IsSpace))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("text: ReadWordPiece %s: line %d is over %d bytes", path, len(tokens)+1, maxVocabLineBytes)
		}
		return nil, fmt.Errorf("text: ReadWordPiece %s: %w", path, err)
	}
	w, err := NewWordPiece(tokens, cfg)
	if err != nil {
		return nil, fmt.Errorf("text: ReadWordPiece %s: %w", path, err)
	}
	return w, nil
}

// NewWordPiece returns the tokenizer of a vocabulary whose token i has
// id i. The unknown, [CLS] and [SEP] tokens must be in it.
func NewWordPiece(tokens []string, cfg WordPieceConfig) (*WordPiece, error) {
	if cfg.MaxWordChars < 0 {
		return nil, fmt.Errorf("text: NewWordPiece: MaxWordChars=%d, want >= 0", cfg.MaxWordChars)
	}
	if cfg.MaxWordChars == 0 {
		cfg.MaxWordChars = 100
	}
	cfg.Unknown = cmp.Or(cfg.Unknown, "[UNK]")
	cfg.CLS = cmp.Or(cfg.CLS, "[CLS]")
	cfg.SEP = cmp.Or(cfg.SEP, "[SEP]")
	w := &WordPiece{cfg: cfg, vocab: make(map[string]int, len(tokens)), tokens: tokens}
	for i, t := range tokens {
		w.vocab[t] = i
	}
	var errs []error
	for _, s := range []struct {
		tok string
		id  *int
	}{{cfg.Unknown, &w.unk}, {cfg.CLS, &w.cls}, {cfg.SEP, &w.sep}} {
		id, ok := w.vocab[s.tok]
		if !ok {
			errs = append(errs, fmt.Errorf("special token %q is not in the vocabulary of %d tokens", s.tok, len(tokens)))
		}
		*s.id = id
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("text: NewWordPiece: %w", errors.Join(errs...))
	}
	return w, nil
}

// Len returns the vocabulary's size.
func (w *WordPiece) Len() int {
	if w == nil {
		return 0
	}
	return len(w.tokens)
}

// Token returns the token of an id, or "" for an id outside the vocabulary.
func (w *WordPiece) Token(id int) string {
	if w == nil || id < 0 || id >= len(w.tokens) {
		return ""
	}
	return w.tokens[id]
}

// ID returns the id of a token and whether the vocabulary has it.
func (w *WordPiece) ID(token string) (int, bool) {
	if w == nil {
		return 0, false
	}
	id, ok := w.vocab[token]
	return id, ok
}

// IDs returns the ids of the word pieces of s, without special tokens.
func (w *WordPiece) IDs(s string) []int {
	if w == nil {
		return nil
	}
	var ids []int
	lower := !w.cfg.Cased
	bertPreTokenize(bertNormalize(s, !w.cfg.NoChineseSplit, lower && !w.cfg.KeepAccents, lower), func(word string) {
		ids = w.appendWord(ids, word)
	})
	return ids
}

// Tokenize returns the word pieces of s, without special tokens.
func (w *WordPiece) Tokenize(s string) []string {
	ids := w.IDs(s)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = w.tokens[id]
	}
	return out
}

// appendWord appends the ids of one word's pieces: greedy longest match
// from the left, "##" before every piece but the first; the unknown token
// for the whole word when some position matches nothing or the word is
// longer than MaxWordChars characters.
func (w *WordPiece) appendWord(ids []int, word string) []int {
	if utf8.RuneCountInString(word) > w.cfg.MaxWordChars {
		return append(ids, w.unk)
	}
	n := len(ids)
	var buf []byte
	for start := 0; start < len(word); {
		found := -1
		end := len(word)
		for end > start {
			piece := word[start:end]
			if start > 0 {
				buf = append(append(buf[:0], "##"...), piece...)
				piece = string(buf)
			}
			if id, ok := w.vocab[piece]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], w.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// Encoding is a tokenized input as a model takes it: the ids with [CLS]
// and [SEP], and the token type (segment) of each, 0 for the first
// sequence and its [CLS] and [SEP], 1 for the second and its [SEP].
type Encoding struct {
	IDs, TypeIDs []int
}

// Encode returns [CLS] s [SEP]. With maxLen > 0 the pieces of s are cut so
// that the encoding has at most maxLen ids (transformers' truncation=True,
// max_length); maxLen must then leave room for the two special tokens.
func (w *WordPiece) Encode(s string, maxLen int) (Encoding, error) {
	if w == nil {
		return Encoding{}, errors.New("text: Encode on a nil WordPiece")
	}
	a := w.IDs(s)
	if maxLen > 0 {
		if maxLen < 2 {
			return Encoding{}, fmt.Errorf("text: Encode: max length %d leaves no room for [CLS] and [SEP]", maxLen)
		}
		a = a[:min(len(a), maxLen-2)]
	}
	e := Encoding{IDs: make([]int, 0, len(a)+2), TypeIDs: make([]int, len(a)+2)}
	e.IDs = append(append(append(e.IDs, w.cls), a...), w.sep)
	return e, nil
}

// EncodePair returns [CLS] a [SEP] b [SEP] with token types 0 up to the
// first [SEP] and 1 after it; an empty b is no pair, Encode(a, maxLen), as
// transformers' BertTokenizer takes an empty text_pair. With maxLen > 0 the two sequences' pieces
// are cut to fit maxLen ids by tokenizers' longest-first rule: the shorter
// keeps its length when the longer can take the rest, else the two share
// the room, the one that was longer taking the odd piece (ties: the second).
func (w *WordPiece) EncodePair(a, b string, maxLen int) (Encoding, error) {
	if w == nil {
		return Encoding{}, errors.New("text: EncodePair on a nil WordPiece")
	}
	if b == "" {
		return w.Encode(a, maxLen)
	}
	x, y := w.IDs(a), w.IDs(b)
	if maxLen > 0 {
		if maxLen < 3 {
			return Encoding{}, fmt.Errorf("text: EncodePair: max length %d leaves no room for [CLS] and two [SEP]", maxLen)
		}
		n1, n2 := longestFirst(len(x), len(y), maxLen-3)
		x, y = x[:n1], y[:n2]
	}
	e := Encoding{IDs: make([]int, 0, len(x)+len(y)+3), TypeIDs: make([]int, len(x)+len(y)+3)}
	e.IDs = append(append(append(e.IDs, w.cls), x...), w.sep)
	e.IDs = append(append(e.IDs, y...), w.sep)
	for i := len(x) + 2; i < len(e.TypeIDs); i++ {
		e.TypeIDs[i] = 1
	}
	return e, nil
}

// longestFirst returns the lengths two sequences of l1 and l2 pieces are
// cut to so that they fit room, as tokenizers' TruncationStrategy::
// LongestFirst computes them (utils/truncation.rs).
func longestFirst(l1, l2, room int) (int, int) {
	if l1+l2 <= room {
		return l1, l2
	}
	n1, n2 := l1, l2
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > room {
		n2 = n1
	} else {
		n2 = max(n1, room-n1)
	}
	if n1+n2 > room {
		n1 = room / 2
		n2 = n1 + room%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return min(n1, l1), min(n2, l2)
}
