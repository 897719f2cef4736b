package transformer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/parallel"
	"github.com/plumbml/plumb/metrics"
	"github.com/plumbml/plumb/text"
)

// Tokenize splits a sentence into words: lower-cased, then split as
// sacreBLEU's 13a tokeniser splits (metrics.Tokenize13a), the words BPE
// segments and BLEU counts (as the RNN translation chapter does).
func Tokenize(line string) []string {
	return strings.Fields(strings.ToLower(metrics.Tokenize13a(line)))
}

// Pair is a sentence pair as BPE ids, without the sentence marks.
type Pair struct{ Src, Trg []int }

// Data is Multi30k task 1, English to German, as subword ids of one BPE
// learned on the training pairs of both languages together (a shared
// vocabulary, Sennrich et al. 2016 section 4 "joint BPE"): the training
// pairs, the validation pairs and test2016 with its German sentences as
// words (BLEU's references).
type Data struct {
	BPE        *text.BPE
	Train, Val []Pair
	Test       []Pair
	TestRefs   []string // test2016's German sentences, tokenised and joined by spaces
	TestSrc    []string // and its English ones
	Skipped    int      // training pairs longer than maxLen subwords, left out
}

// findMulti30k finds the folder of the Multi30k files under dir.
func findMulti30k(dir string) (string, error) {
	for _, d := range []string{filepath.Join(dir, "multi30k"), dir} {
		if _, err := os.Stat(filepath.Join(d, "train.en.gz")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("transformer: no Multi30k (train.en.gz) in %s or %s/multi30k", dir, dir)
}

// LoadData reads Multi30k from dir (or dir/multi30k): train, val and
// test_2016_flickr (raw or gzip), tokenised by Tokenize. With bpe nil it
// learns merges on the training words of both languages (text.LearnBPE,
// at least twice seen); else it uses bpe, a checkpoint's. Training pairs
// of more than maxLen subwords on either side (sentence mark included)
// are left out; validation and test pairs are kept whole.
func LoadData(dir string, bpe *text.BPE, merges, maxLen int) (*Data, error) {
	dir, err := findMulti30k(dir)
	if err != nil {
		return nil, err
	}
	if maxLen < 2 {
		return nil, fmt.Errorf("transformer: LoadData: maxLen %d; want at least 2 (a token and the sentence mark)", maxLen)
	}
	load := func(split string) ([]parallel.Pair, error) {
		return parallel.Load(filepath.Join(dir, split+".en.gz"), filepath.Join(dir, split+".de.gz"), Tokenize)
	}
	train, err := load("train")
	if err != nil {
		return nil, err
	}
	val, err := load("val")
	if err != nil {
		return nil, err
	}
	test, err := load("test_2016_flickr")
	if err != nil {
		return nil, err
	}
	if bpe == nil {
		counts := map[string]int{}
		for _, p := range train {
			for _, w := range p.Src {
				counts[w]++
			}
			for _, w := range p.Trg {
				counts[w]++
			}
		}
		if bpe, err = text.LearnBPE(counts, text.BPEConfig{Merges: merges}); err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
	}
	d := &Data{BPE: bpe}
	encode := func(ps []parallel.Pair) []Pair {
		out := make([]Pair, len(ps))
		for i, p := range ps {
			out[i] = Pair{bpe.Encode(p.Src), bpe.Encode(p.Trg)}
		}
		return out
	}
	for _, p := range encode(train) {
		if len(p.Src) == 0 || len(p.Trg) == 0 || len(p.Src)+1 > maxLen || len(p.Trg)+1 > maxLen {
			d.Skipped++
			continue
		}
		d.Train = append(d.Train, p)
	}
	if len(d.Train) == 0 {
		return nil, errors.New("transformer: no training pair within the length limit")
	}
	d.Val, d.Test = encode(val), encode(test)
	for _, p := range test {
		d.TestRefs = append(d.TestRefs, strings.Join(p.Trg, " "))
		d.TestSrc = append(d.TestSrc, strings.Join(p.Src, " "))
	}
	return d, nil
}

// Dataset is pairs as the fields Loss reads: "src" (the source and the
// end mark), "trg" (the start mark and the target) and "trg_next" (the
// target and the end mark), ragged int64.
func Dataset(pairs []Pair) (*data.Dataset, error) {
	src, trg, next := make([][]int64, len(pairs)), make([][]int64, len(pairs)), make([][]int64, len(pairs))
	for i, p := range pairs {
		src[i] = append(int64s(p.Src), endID)
		trg[i] = append([]int64{startID}, int64s(p.Trg)...)
		next[i] = append(int64s(p.Trg), endID)
	}
	return data.NewDataset(data.SeqField("src", src), data.SeqField("trg", trg), data.SeqField("trg_next", next))
}

// The ids of text.BPE's special tokens.
const (
	padID   = 0
	startID = 1
	endID   = 2
)

func int64s(ids []int) []int64 {
	out := make([]int64, len(ids), len(ids)+1)
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}
