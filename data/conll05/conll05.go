package conll05

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/internal/readlimit"
)

// Example is one predicate of one CoNLL-05 sentence: the sentence's
// words, the predicate (the verb's lemma from the props file's first
// column) and one IOB tag per word for this predicate's arguments.
type Example struct {
	Words     []string
	Predicate string
	Labels    []string
}

// Read pairs a words file (one token per line) with its props file
// (one line per token: the predicate lemma or "-", then one bracketed
// column per predicate), raw or gzip, sentences separated by empty lines,
// and turns every predicate column into IOB tags as Paddle's conll05
// corpus_reader does: "(A1*" opens A1 and tags B-A1, "*" inside it I-A1,
// "*)" I-A1 and closes it, "(A1*)" is a one-word B-A1, and "*" outside any
// argument O. The k-th predicate column belongs to the k-th non-"-" lemma.
// A sentence without predicates gives no example. Files of different
// lengths, ragged columns, a lemma count that differs from the columns and
// any other token are errors naming the file and line, and so is an
// argument still open at the sentence's end ("(A0*" never closed).
//
// The examples of one sentence share its Words slice (read-only), and
// equal labels share one string, so memory is linear in the input: a
// sentence of n words and k predicates holds n×k props tokens and gives
// n×k labels. It reads within data.DefaultLimits (see ReadLimits).
func Read(words, props io.Reader, wordsName, propsName string) ([]Example, error) {
	return ReadLimits(words, props, wordsName, propsName, data.Limits{})
}

// ReadLimits is Read within lim: a gzip input may expand at most
// lim.MaxRatio times and hold lim.MaxFileBytes bytes, a line
// lim.MaxLineBytes, and the files give at most lim.MaxRecords examples
// and lim.MaxRecords labels in all.
func ReadLimits(words, props io.Reader, wordsName, propsName string, lim data.Limits) ([]Example, error) {
	lim = lim.Resolve()
	wr, err := fileio.Plain(words, wordsName, lim)
	if err != nil {
		return nil, fmt.Errorf("conll05: %w", err)
	}
	pr, err := fileio.Plain(props, propsName, lim)
	if err != nil {
		return nil, fmt.Errorf("conll05: %w", err)
	}
	ws, ps := lineScanner(wr, lim), lineScanner(pr, lim)
	var out []Example
	sr := &srl{labels: map[string]string{}, budget: readlimit.Budget{Name: "labels", Limit: lim.MaxRecords}}
	var sent []string
	var rows [][]string
	start := 1 // line of the sentence's first token
	for line := 1; ; line++ {
		wok, pok := ws.Scan(), ps.Scan()
		if !wok || !pok {
			if err := cmpErr(ws.Err(), wordsName, line); err != nil {
				return nil, err
			}
			if err := cmpErr(ps.Err(), propsName, line); err != nil {
				return nil, err
			}
			if wok != pok {
				return nil, fmt.Errorf("conll05: %s and %s differ in length: only one has line %d", wordsName, propsName, line)
			}
			break
		}
		if err := cmpErr(ws.Err(), wordsName, line); err != nil { // a budget stopped the file mid-line
			return nil, err
		}
		if err := cmpErr(ps.Err(), propsName, line); err != nil {
			return nil, err
		}
		word := strings.TrimSpace(ws.Text())
		cols := strings.Fields(ps.Text())
		if len(cols) == 0 {
			if word != "" {
				return nil, fmt.Errorf("conll05: %s line %d has word %q but %s line %d is empty", wordsName, line, word, propsName, line)
			}
			exs, err := sr.sentence(sent, rows, propsName, start)
			if err != nil {
				return nil, err
			}
			out = append(out, exs...)
			sent, rows, start = sent[:0:0], rows[:0:0], line+1
			continue
		}
		if len(rows) > 0 && len(cols) != len(rows[0]) {
			return nil, fmt.Errorf("conll05: %s line %d has %d columns, the sentence's first line %d has %d", propsName, line, len(cols), start, len(rows[0]))
		}
		if word == "" {
			return nil, fmt.Errorf("conll05: %s line %d is empty inside a sentence (%s has %q)", wordsName, line, propsName, ps.Text())
		}
		sent, rows = append(sent, word), append(rows, cols)
	}
	exs, err := sr.sentence(sent, rows, propsName, start) // a last sentence without a closing empty line
	if err != nil {
		return nil, err
	}
	return append(out, exs...), nil
}

func lineScanner(r io.Reader, lim data.Limits) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), lim.MaxLineBytes)
	return sc
}

func cmpErr(err error, name string, line int) error {
	if err != nil {
		return fmt.Errorf("conll05: %s line %d: %w", name, line, err)
	}
	return nil
}

// srl turns sentences into examples, interning labels and drawing each
// label on budget.
type srl struct {
	labels map[string]string
	budget readlimit.Budget
}

// label returns prefix+tag, one string per distinct label.
func (s *srl) label(prefix, tag string) string {
	l := prefix + tag
	if v, ok := s.labels[l]; ok {
		return v
	}
	s.labels[l] = l
	return l
}

// sentence turns one sentence's props rows into one example per predicate.
func (s *srl) sentence(words []string, rows [][]string, propsName string, start int) ([]Example, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	var verbs []string
	for _, r := range rows {
		if r[0] != "-" {
			verbs = append(verbs, r[0])
		}
	}
	if len(verbs) != len(rows[0])-1 {
		return nil, fmt.Errorf("conll05: %s sentence at line %d names %d predicates but has %d argument columns", propsName, start, len(verbs), len(rows[0])-1)
	}
	if err := s.budget.Take(int64(len(verbs))*int64(len(rows)), fmt.Sprintf("%s sentence at line %d", propsName, start)); err != nil {
		return nil, fmt.Errorf("conll05: %w", err)
	}
	words = words[:len(words):len(words)] // shared: an append copies
	out := make([]Example, len(verbs))
	for k, verb := range verbs {
		labels := make([]string, len(rows))
		tag, open, opened := "", false, 0
		for i, r := range rows {
			l := r[k+1]
			switch {
			case l == "*" && !open:
				labels[i] = "O"
			case l == "*" || l == "*)":
				if !open {
					return nil, fmt.Errorf("conll05: %s line %d column %d: %q closes no argument", propsName, start+i, k+2, l)
				}
				labels[i], open = s.label("I-", tag), l == "*"
			case strings.HasPrefix(l, "(") && strings.Count(l, "*") == 1 && (strings.HasSuffix(l, "*") || strings.HasSuffix(l, "*)")):
				if open {
					return nil, fmt.Errorf("conll05: %s line %d column %d: argument (%s* of line %d is never closed: %q opens another (arguments do not nest)", propsName, start+opened, k+2, tag, start+i, l)
				}
				tag = l[1:strings.IndexByte(l, '*')]
				if tag == "" || strings.ContainsAny(tag, "()") {
					return nil, fmt.Errorf("conll05: %s line %d column %d: bad argument %q", propsName, start+i, k+2, l)
				}
				labels[i], open, opened = s.label("B-", tag), strings.HasSuffix(l, "*"), i
			default:
				return nil, fmt.Errorf("conll05: %s line %d column %d: unexpected label %q: want *, *), (TAG* or (TAG*)", propsName, start+i, k+2, l)
			}
		}
		if open {
			return nil, fmt.Errorf("conll05: %s line %d column %d: argument (%s* is never closed: want *) before the sentence ends at line %d", propsName, start+opened, k+2, tag, start+len(rows)-1)
		}
		out[k] = Example{Words: words, Predicate: verb, Labels: labels}
	}
	return out, nil
}

// Load reads one CoNLL-2005 test set, set = "test.wsj" (the one
// Paddle trains on) or "test.brown", from dir, dir/conll05st-release or
// dir/conll05/conll05st-release: <set>/words/<set>.words.gz and
// <set>/props/<set>.props.gz (or without .gz). It reads within
// data.DefaultLimits (see LoadLimits).
func Load(dir, set string) ([]Example, error) {
	return LoadLimits(dir, set, data.Limits{})
}

// LoadLimits is Load within lim (see ReadLimits).
func LoadLimits(dir, set string, lim data.Limits) ([]Example, error) {
	var paths [2]string
	for i, kind := range []string{"words", "props"} {
		base := set + "/" + kind + "/" + set + "." + kind
		var cands []string
		for _, sub := range []string{"", "conll05st-release/", "conll05/conll05st-release/"} {
			cands = append(cands, sub+base+".gz", sub+base)
		}
		p, err := fileio.FindPath(dir, cands...)
		if err != nil {
			return nil, fmt.Errorf("conll05: %w", err)
		}
		paths[i] = p
	}
	var out []Example
	err := fileio.WithRaw(paths[0], func(w io.Reader) error {
		return fileio.WithRaw(paths[1], func(p io.Reader) error {
			var err error
			out, err = ReadLimits(w, p, paths[0], paths[1], lim)
			return err
		})
	})
	return out, err
}

// LabelVocab reads Paddle's targetDict.txt and numbers the tags as
// Paddle's load_label_dict does: every tag T with a line "B-T" or "I-T"
// gets B-T = 2k and I-T = 2k+1, and "O" comes last. Paddle numbers the
// tags in the order of a Python set, which varies between runs; we take
// them in order of first appearance in the file, so the ids are fixed.
// It reads within data.DefaultLimits.
func LabelVocab(r io.Reader, name string) (*data.Vocab, error) {
	r, err := fileio.Plain(r, name, data.Limits{})
	if err != nil {
		return nil, fmt.Errorf("conll05: %w", err)
	}
	var words []string
	seen := map[string]bool{}
	err = fileio.EachLine(r, name, data.Limits{}, func(_ int, line string) error {
		line = strings.TrimSpace(line)
		if t, ok := strings.CutPrefix(line, "B-"); ok || strings.HasPrefix(line, "I-") {
			if !ok {
				t = line[2:]
			}
			if !seen[t] {
				seen[t] = true
				words = append(words, "B-"+t, "I-"+t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("conll05: %w", err)
	}
	return data.NewVocab(append(words, "O"), "")
}

// LoadDicts reads Paddle's dictionaries from dir, dir/paddle_dicts or
// dir/conll05/paddle_dicts: verbDict.txt (predicates, id = line) and
// targetDict.txt (tags, see LabelVocab); and wordDict.txt (words, id =
// line, with <unk>) when present, else words is nil. Each file must be
// a regular file, read within data.DefaultLimits (data.LoadVocab).
func LoadDicts(dir string) (words, verbs, labels *data.Vocab, err error) {
	for _, sub := range []string{"paddle_dicts", "conll05/paddle_dicts"} {
		if p := filepath.Join(dir, sub); fileio.IsDir(p) {
			dir = p
			break
		}
	}
	load := func(base string, fn func(r io.Reader, p string) (*data.Vocab, error)) (*data.Vocab, error) {
		p := filepath.Join(dir, base)
		var v *data.Vocab
		err := fileio.WithRaw(p, func(r io.Reader) error {
			var err error
			v, err = fn(r, p)
			return err
		})
		return v, err
	}
	plainDict := func(unk string) func(r io.Reader, p string) (*data.Vocab, error) {
		return func(r io.Reader, p string) (*data.Vocab, error) { return data.LoadVocab(r, p, unk) }
	}
	if verbs, err = load("verbDict.txt", plainDict("")); err != nil {
		return nil, nil, nil, fmt.Errorf("conll05: %w", err)
	}
	if labels, err = load("targetDict.txt", LabelVocab); err != nil {
		return nil, nil, nil, fmt.Errorf("conll05: %w", err)
	}
	if fileio.IsFile(filepath.Join(dir, "wordDict.txt")) {
		if words, err = load("wordDict.txt", plainDict(data.Unk)); err != nil {
			return nil, nil, nil, fmt.Errorf("conll05: %w", err)
		}
	}
	return words, verbs, labels, nil
}

// Dataset encodes examples as Paddle's conll05 reader_creator does,
// into nine ragged int64 fields of one entry per word: "word" (the word
// ids), "ctx_n2", "ctx_n1", "ctx_0", "ctx_p1", "ctx_p2" (the words two and
// one before the predicate, the predicate word, one and two after it,
// repeated over the sentence; "bos"/"eos" looked up in words past the
// sentence's ends), "verb" (the predicate's id in verbs, repeated), "mark"
// (1 on the predicate and the two words either side, else 0) and "label"
// (the tags' ids). The predicate is the word tagged B-V. Words outside the
// vocabulary map to its unknown token; a predicate missing from verbs, a
// tag missing from labels, or a sentence without B-V is an error.
func Dataset(exs []Example, words, verbs, labels *data.Vocab) (*data.Dataset, error) {
	if words == nil || verbs == nil || labels == nil {
		return nil, fmt.Errorf("conll05: Dataset needs word, verb and label vocabularies")
	}
	names := []string{"word", "ctx_n2", "ctx_n1", "ctx_0", "ctx_p1", "ctx_p2", "verb", "mark", "label"}
	cols := make([][][]int64, len(names))
	for i := range cols {
		cols[i] = make([][]int64, len(exs))
	}
	for e, ex := range exs {
		n := len(ex.Words)
		if len(ex.Labels) != n {
			return nil, fmt.Errorf("conll05: Dataset: example %d has %d words but %d labels", e, n, len(ex.Labels))
		}
		v := -1
		for i, l := range ex.Labels {
			if l == "B-V" {
				v = i
				break
			}
		}
		if v < 0 {
			return nil, fmt.Errorf("conll05: Dataset: example %d (predicate %q) has no B-V tag", e, ex.Predicate)
		}
		wordIDs, err := words.Encode(ex.Words)
		if err != nil {
			return nil, fmt.Errorf("conll05: Dataset: example %d: %w", e, err)
		}
		mark := make([]int64, n)
		ctx := func(off int) []int64 {
			w := "bos"
			if j := v + off; j >= n {
				w = "eos"
			} else if j >= 0 {
				w = ex.Words[j]
				mark[j] = 1
			}
			return repeat(int64(words.ID(w)), n)
		}
		cols[1][e], cols[2][e], cols[3][e], cols[4][e], cols[5][e] = ctx(-2), ctx(-1), ctx(0), ctx(1), ctx(2)
		verb := verbs.ID(ex.Predicate)
		if verb < 0 {
			return nil, fmt.Errorf("conll05: Dataset: example %d: predicate %q is not in the verb dictionary", e, ex.Predicate)
		}
		labelIDs, err := labels.Encode(ex.Labels)
		if err != nil {
			return nil, fmt.Errorf("conll05: Dataset: example %d: %w", e, err)
		}
		cols[0][e], cols[6][e], cols[7][e], cols[8][e] = wordIDs, repeat(int64(verb), n), mark, labelIDs
	}
	fields := make([]data.Field, len(names))
	for i, name := range names {
		fields[i] = data.SeqField(name, cols[i])
	}
	return data.NewDataset(fields...)
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
