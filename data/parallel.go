package data

import (
	"fmt"
	"io"
	"strings"
)

// Pair is one sentence pair of a parallel corpus, as tokens.
type Pair struct {
	Src, Trg []string
}

// ReadParallel reads two aligned texts (raw or gzip), one sentence per
// line, line i of src translating line i of trg (Multi30k's train.en and
// train.de, WMT's .en/.fr), and splits each line with tokenize
// (strings.Fields when nil). Different line counts are an error naming
// both inputs and their counts.
func ReadParallel(src, trg io.Reader, srcName, trgName string, tokenize func(string) []string) ([]Pair, error) {
	if tokenize == nil {
		tokenize = strings.Fields
	}
	var sides [2][][]string
	for i, in := range []struct {
		r    io.Reader
		name string
	}{{src, srcName}, {trg, trgName}} {
		r, err := plain(in.r, in.name, maxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("parallel: %w", err)
		}
		err = eachLine(r, in.name, func(_ int, line string) error {
			sides[i] = append(sides[i], tokenize(line))
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

// LoadParallel reads the files at srcPath and trgPath (see ReadParallel).
func LoadParallel(srcPath, trgPath string, tokenize func(string) []string) ([]Pair, error) {
	var out []Pair
	err := withRaw(srcPath, func(s io.Reader) error {
		return withRaw(trgPath, func(t io.Reader) error {
			var err error
			out, err = ReadParallel(s, t, srcPath, trgPath, tokenize)
			return err
		})
	})
	return out, err
}

// ParallelVocab counts one side's tokens (src when target is false) and
// builds a dictionary laid out as Paddle's WMT14 ones: <s>, <e>, <unk> at
// ids 0, 1, 2, then the words by descending count and word, at most
// maxWords of them (0: all) seen at least minCount times.
func ParallelVocab(pairs []Pair, target bool, maxWords, minCount int) (*Vocab, error) {
	var counts Counter
	for _, p := range pairs {
		if target {
			counts.Add(p.Trg...)
		} else {
			counts.Add(p.Src...)
		}
	}
	return BuildVocab(&counts, VocabConfig{MaxWords: maxWords, MinCount: minCount, Specials: []string{BOS, EOS, Unk}, Unk: Unk})
}

// ParallelDataset encodes pairs as Paddle's wmt14 reader does, into ragged
// int64 fields "src" (<s> source ids <e>), "trg" (<s> target ids, the
// decoder's input) and "trg_next" (target ids <e>, what it predicts).
// Pairs whose source (with <s> and <e>) or target ids are longer than
// maxLen are skipped (maxLen <= 0 keeps all; Paddle trains with 80).
// Both vocabularies need <s>, <e> and an unknown token.
func ParallelDataset(pairs []Pair, src, trg *Vocab, maxLen int) (*Dataset, error) {
	for _, v := range []*Vocab{src, trg} {
		if err := needTokens(v, BOS, EOS); err != nil {
			return nil, fmt.Errorf("data: ParallelDataset: %w", err)
		}
	}
	var s, t, tn [][]int64
	for i, p := range pairs {
		sIDs, err := src.Encode(frame(p.Src))
		if err != nil {
			return nil, fmt.Errorf("data: ParallelDataset: pair %d source: %w", i, err)
		}
		tIDs, err := trg.Encode(frame(p.Trg))
		if err != nil {
			return nil, fmt.Errorf("data: ParallelDataset: pair %d target: %w", i, err)
		}
		if maxLen > 0 && (len(sIDs) > maxLen || len(tIDs)-2 > maxLen) {
			continue
		}
		s, t, tn = append(s, sIDs), append(t, tIDs[:len(tIDs)-1]), append(tn, tIDs[1:])
	}
	return NewDataset(SeqField("src", s), SeqField("trg", t), SeqField("trg_next", tn))
}
