package parallel

import (
	"fmt"
	"io"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
)

// Pair is one sentence pair of a parallel corpus, as tokens.
type Pair struct {
	Src, Trg []string
}

// Read reads two aligned texts (raw or gzip), one sentence per
// line, line i of src translating line i of trg (Multi30k's train.en and
// train.de, WMT's .en/.fr), and splits each line with tokenize
// (strings.Fields when nil). Different line counts are an error naming
// both inputs and their counts. Binary data (a NUL byte) is an error
// naming the line. It reads within data.DefaultLimits (see ReadLimits).
func Read(src, trg io.Reader, srcName, trgName string, tokenize func(string) []string) ([]Pair, error) {
	return ReadLimits(src, trg, srcName, trgName, tokenize, data.Limits{})
}

// ReadLimits is Read within lim, side by side: a gzip side may expand at
// most lim.MaxRatio times and hold lim.MaxFileBytes bytes, a line
// lim.MaxLineBytes, and a side at most lim.MaxRecords lines and
// lim.MaxRecords tokens.
func ReadLimits(src, trg io.Reader, srcName, trgName string, tokenize func(string) []string, lim data.Limits) ([]Pair, error) {
	lim = lim.Resolve()
	if tokenize == nil {
		tokenize = strings.Fields
	}
	var sides [2][][]string
	for i, in := range []struct {
		r    io.Reader
		name string
	}{{src, srcName}, {trg, trgName}} {
		r, err := fileio.Plain(in.r, in.name, lim)
		if err != nil {
			return nil, fmt.Errorf("parallel: %w", err)
		}
		tokens := int64(0)
		err = fileio.EachLine(r, in.name, lim, func(n int, line string) error {
			toks := tokenize(line)
			if tokens += int64(len(toks)); tokens > lim.MaxRecords {
				return fmt.Errorf("%s: line %d: more than %d tokens: %w", in.name, n, lim.MaxRecords, fileio.ErrTooBig)
			}
			sides[i] = append(sides[i], toks)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("parallel: %w", err)
		}
	}
	if len(sides[0]) != len(sides[1]) {
		return nil, fmt.Errorf("parallel: %s has %d lines but %s has %d: the sides must align line by line", srcName, len(sides[0]), trgName, len(sides[1]))
	}
	out := make([]Pair, len(sides[0]))
	for i := range out {
		out[i] = Pair{Src: sides[0][i], Trg: sides[1][i]}
	}
	return out, nil
}

// Load reads the files at srcPath and trgPath, which must be regular
// files (see Read), within data.DefaultLimits.
func Load(srcPath, trgPath string, tokenize func(string) []string) ([]Pair, error) {
	return LoadLimits(srcPath, trgPath, tokenize, data.Limits{})
}

// LoadLimits is Load within lim (see ReadLimits).
func LoadLimits(srcPath, trgPath string, tokenize func(string) []string, lim data.Limits) ([]Pair, error) {
	var out []Pair
	err := fileio.WithRaw(srcPath, func(s io.Reader) error {
		return fileio.WithRaw(trgPath, func(t io.Reader) error {
			var err error
			out, err = ReadLimits(s, t, srcPath, trgPath, tokenize, lim)
			return err
		})
	})
	return out, err
}

// Vocab counts one side's tokens (src when target is false) and
// builds a dictionary laid out as Paddle's WMT14 ones: <s>, <e>, <unk> at
// ids 0, 1, 2, then the words by descending count and word, at most
// maxWords of them (0: all) seen at least minCount times.
func Vocab(pairs []Pair, target bool, maxWords, minCount int) (*data.Vocab, error) {
	var counts data.Counter
	for _, p := range pairs {
		if target {
			counts.Add(p.Trg...)
		} else {
			counts.Add(p.Src...)
		}
	}
	return data.BuildVocab(&counts, data.VocabConfig{MaxWords: maxWords, MinCount: minCount, Specials: []string{data.BOS, data.EOS, data.Unk}, Unk: data.Unk})
}

// Dataset encodes pairs as Paddle's wmt14 reader does, into ragged
// int64 fields "src" (<s> source ids <e>), "trg" (<s> target ids, the
// decoder's input) and "trg_next" (target ids <e>, what it predicts).
// Pairs whose source (with <s> and <e>) or target ids are longer than
// maxLen are skipped (maxLen 0 keeps all; Paddle trains with 80; a
// negative maxLen is an error). Both vocabularies need <s>, <e> and an
// unknown token.
func Dataset(pairs []Pair, src, trg *data.Vocab, maxLen int) (*data.Dataset, error) {
	if maxLen < 0 {
		return nil, fmt.Errorf("parallel: Dataset: maxLen %d: want 0 (no limit) or more", maxLen)
	}
	for _, v := range []*data.Vocab{src, trg} {
		if err := v.Require(data.BOS, data.EOS); err != nil {
			return nil, fmt.Errorf("parallel: Dataset: %w", err)
		}
	}
	var s, t, tn [][]int64
	for i, p := range pairs {
		sIDs, err := src.Encode(frame(p.Src))
		if err != nil {
			return nil, fmt.Errorf("parallel: Dataset: pair %d source: %w", i, err)
		}
		tIDs, err := trg.Encode(frame(p.Trg))
		if err != nil {
			return nil, fmt.Errorf("parallel: Dataset: pair %d target: %w", i, err)
		}
		if maxLen > 0 && (len(sIDs) > maxLen || len(tIDs)-2 > maxLen) {
			continue
		}
		s, t, tn = append(s, sIDs), append(t, tIDs[:len(tIDs)-1]), append(tn, tIDs[1:])
	}
	return data.NewDataset(data.SeqField("src", s), data.SeqField("trg", t), data.SeqField("trg_next", tn))
}

// frame puts <s> before and <e> after words.
func frame(words []string) []string {
	return append(append([]string{data.BOS}, words...), data.EOS)
}
