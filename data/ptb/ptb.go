package ptb

import (
	"fmt"
	"io"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/tensor"
)

// Read reads Mikolov's Penn Treebank text (the "imikolov" set of the
// book's word2vec chapter), raw or gzip: one sentence per line, words
// separated by spaces, rare words already <unk>. Each line becomes its
// whitespace-separated words (an empty line an empty sentence); name
// labels errors. Binary data (a NUL byte: an IDX file, say) is refused,
// naming the line. It reads within data.DefaultLimits (see ReadLimits).
func Read(r io.Reader, name string) ([][]string, error) {
	return ReadLimits(r, name, data.Limits{})
}

// ReadLimits is Read within lim: a gzip input may expand at most
// lim.MaxRatio times and hold lim.MaxFileBytes bytes, a line
// lim.MaxLineBytes, and the file at most lim.MaxRecords lines and
// lim.MaxRecords words in all.
func ReadLimits(r io.Reader, name string, lim data.Limits) ([][]string, error) {
	lim = lim.Resolve()
	r, err := fileio.Plain(r, name, lim)
	if err != nil {
		return nil, fmt.Errorf("ptb: %w", err)
	}
	var out [][]string
	words := int64(0)
	err = fileio.EachLine(r, name, lim, func(n int, line string) error {
		ws := strings.Fields(line)
		if words += int64(len(ws)); words > lim.MaxRecords {
			return fmt.Errorf("%s: line %d: more than %d words: %w", name, n, lim.MaxRecords, fileio.ErrTooBig)
		}
		out = append(out, ws)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ptb: %w", err)
	}
	return out, nil
}

// Load reads ptb.train.txt, ptb.valid.txt and ptb.test.txt (each raw or
// .gz, each a regular file) from dir, dir/ptb or dir/simple-examples/data
// (the layout of Mikolov's simple-examples.tgz), each within
// data.DefaultLimits (see LoadLimits).
func Load(dir string) (train, valid, test [][]string, err error) {
	return LoadLimits(dir, data.Limits{})
}

// LoadLimits is Load with each file read within lim (see ReadLimits).
func LoadLimits(dir string, lim data.Limits) (train, valid, test [][]string, err error) {
	var splits [3][][]string
	for i, s := range []string{"train", "valid", "test"} {
		base := "ptb." + s + ".txt"
		var cands []string
		for _, sub := range []string{"", "ptb/", "simple-examples/data/"} {
			cands = append(cands, sub+base, sub+base+".gz")
		}
		p, err := fileio.FindPath(dir, cands...)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("ptb: %w", err)
		}
		f, err := fileio.Open(p)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("ptb: %w", err)
		}
		splits[i], err = ReadLimits(f, p, lim)
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return splits[0], splits[1], splits[2], nil
}

// Vocab builds the word dictionary as Paddle's imikolov.build_dict
// does: it counts the words of the given corpora (Paddle: train and valid)
// plus one <s> and one <e> per sentence, so the markers get ids by
// frequency like words; drops the corpus's own <unk>; keeps words seen at
// least minCount times (Paddle's default min_word_freq 50, which keeps
// counts above 50, is minCount 51); sorts by descending count, then by
// word; and appends <unk> last.
func Vocab(minCount int, corpora ...[][]string) (*data.Vocab, error) {
	var counts data.Counter
	for _, c := range corpora {
		for _, sent := range c {
			counts.Add(sent...)
			counts.Add(data.BOS, data.EOS)
		}
	}
	return data.BuildVocab(&counts, data.VocabConfig{MinCount: minCount, Unk: data.Unk})
}

// NGramDataset cuts each sentence, framed as <s> words <e> and encoded
// with v, into every window of n consecutive ids, as Paddle's imikolov
// reader does in NGRAM mode (a framed sentence shorter than n gives
// none). Fields: "context" int64 [M, n-1], the first n-1 ids of each
// window, and "next" int64 [M], its last id: the book's word2vec
// (N-gram language model) inputs and target. v needs <s>, <e> and an
// unknown token.
func NGramDataset(sentences [][]string, v *data.Vocab, n int) (*data.Dataset, error) {
	if n < 2 {
		return nil, fmt.Errorf("ptb: NGramDataset: n=%d, want at least 2 (context and next word)", n)
	}
	if err := v.Require(data.BOS, data.EOS); err != nil {
		return nil, fmt.Errorf("ptb: NGramDataset: %w", err)
	}
	var ctx, next []int64
	for i, sent := range sentences {
		ids, err := v.Encode(frame(sent))
		if err != nil {
			return nil, fmt.Errorf("ptb: NGramDataset: sentence %d: %w", i, err)
		}
		for _, g := range NGrams(ids, n) {
			ctx = append(ctx, g[:n-1]...)
			next = append(next, g[n-1])
		}
	}
	m := len(next)
	return data.NewDataset(data.DenseField("context", tensor.MustFromSlice(ctx, m, n-1)), data.DenseField("next", tensor.MustFromSlice(next, m)))
}

// LMDataset is Paddle imikolov's SEQ mode: sentence i becomes "src" =
// <s> ids and "trg" = ids <e> (ragged int64), and sentences whose src is
// longer than maxLen are skipped (maxLen 0: none; a negative maxLen is
// an error).
func LMDataset(sentences [][]string, v *data.Vocab, maxLen int) (*data.Dataset, error) {
	if maxLen < 0 {
		return nil, fmt.Errorf("ptb: LMDataset: maxLen %d: want 0 (no limit) or more", maxLen)
	}
	if err := v.Require(data.BOS, data.EOS); err != nil {
		return nil, fmt.Errorf("ptb: LMDataset: %w", err)
	}
	var src, trg [][]int64
	for i, sent := range sentences {
		ids, err := v.Encode(frame(sent))
		if err != nil {
			return nil, fmt.Errorf("ptb: LMDataset: sentence %d: %w", i, err)
		}
		if maxLen > 0 && len(ids)-1 > maxLen {
			continue
		}
		src, trg = append(src, ids[:len(ids)-1]), append(trg, ids[1:])
	}
	return data.NewDataset(data.SeqField("src", src), data.SeqField("trg", trg))
}

// frame puts <s> before and <e> after words.
func frame(words []string) []string {
	return append(append([]string{data.BOS}, words...), data.EOS)
}
