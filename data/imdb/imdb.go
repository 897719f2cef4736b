package imdb

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/tensor"
)

// IMDB labels, as Paddle's imdb reader assigns them: positive reviews 0,
// negative reviews 1.
const (
	Positive = 0
	Negative = 1
)

// Review is one labelled IMDB review.
type Review struct {
	ID     int      // the number before "_" in the file name
	Rating int      // the star rating after "_": 7..10 positive, 1..4 negative
	Label  int64    // Positive or Negative, from the pos/neg folder
	Tokens []string // the text through Tokenize
}

// Load reads the labelled reviews of aclImdb (Maas et al. 2011):
// src is the aclImdb_v1.tar.gz archive (or any tar/tar.gz/zip holding the
// same tree), an extracted aclImdb folder, or a folder holding one of
// those (aclImdb, aclImdb_v1.tar.gz, aclImdb_train_test.tar.gz, or the
// same under imdb/). Files {train,test}/{pos,neg}/<id>_<rating>.txt are
// read; unsup/, the urls and the .feat files are skipped. Each review is
// tokenized as Paddle's imdb reader does (Tokenize). Each split holds the
// positive reviews and then the negative ones, each group by file name
// (the archive's order, which Paddle reads). It reads within
// data.DefaultLimits (see LoadLimits).
func Load(src string) (train, test []Review, err error) {
	return LoadLimits(src, data.Limits{})
}

// LoadLimits is Load within lim: the archive may expand at most
// lim.MaxRatio times (a compressed tar as a whole, a zip member by
// member), a review hold lim.MaxFileBytes bytes, all reviews
// lim.MaxTotalBytes, and there may be at most lim.MaxRecords reviews;
// each is checked from the member's header where it can be, before the
// member is read.
func LoadLimits(src string, lim data.Limits) (train, test []Review, err error) {
	return LoadProgress(src, lim, nil)
}

// LoadProgress is LoadLimits reporting to p (nil: silently) the reviews
// and bytes it reads, so that a command can show the seconds the archive
// takes (data.NewProgress); it ends the phase with p.Done.
func LoadProgress(src string, lim data.Limits, p *data.Progress) (train, test []Review, err error) {
	defer p.Done()
	if fileio.IsDir(src) {
		if p, err := fileio.FindPath(src, "aclImdb", "aclImdb_v1.tar.gz", "aclImdb_train_test.tar.gz",
			"imdb/aclImdb", "imdb/aclImdb_v1.tar.gz", "imdb/aclImdb_train_test.tar.gz"); err == nil {
			src = p
		}
	}
	type named struct {
		file string
		r    Review
	}
	var splits [2][]named
	err = fileio.WalkTree(src, lim, func(name string) bool { _, _, _, ok := imdbPath(name); return ok }, func(name string, _ int64, r io.Reader) error {
		split, label, file, _ := imdbPath(name)
		id, rating, err := imdbFileName(file)
		if err != nil {
			return fmt.Errorf("imdb: %s: %s: %w", src, name, err)
		}
		text, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("imdb: %w", err)
		}
		splits[split] = append(splits[split], named{file, Review{ID: id, Rating: rating, Label: label, Tokens: Tokenize(string(text))}})
		p.Add(1, int64(len(text)))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var out [2][]Review
	for i, s := range splits {
		if len(s) == 0 {
			return nil, nil, fmt.Errorf("imdb: no %s/{pos,neg}/<id>_<rating>.txt reviews in %s", []string{"train", "test"}[i], src)
		}
		slices.SortFunc(s, func(a, b named) int {
			return cmp.Or(cmp.Compare(a.r.Label, b.r.Label), strings.Compare(a.file, b.file))
		})
		for _, n := range s {
			out[i] = append(out[i], n.r)
		}
	}
	return out[0], out[1], nil
}

// imdbPath recognises .../{train,test}/{pos,neg}/<file>.txt: split 0 for
// train and 1 for test, and the label.
func imdbPath(name string) (split int, label int64, file string, ok bool) {
	parts := strings.Split(name, "/")
	if len(parts) < 3 {
		return 0, 0, "", false
	}
	s, l, f := parts[len(parts)-3], parts[len(parts)-2], parts[len(parts)-1]
	switch s {
	case "train":
		split = 0
	case "test":
		split = 1
	default:
		return 0, 0, "", false
	}
	switch l {
	case "pos":
		label = Positive
	case "neg":
		label = Negative
	default:
		return 0, 0, "", false
	}
	return split, label, f, path.Ext(f) == ".txt"
}

// imdbFileName parses <id>_<rating>.txt.
func imdbFileName(file string) (id, rating int, err error) {
	idS, ratingS, ok := strings.Cut(strings.TrimSuffix(file, ".txt"), "_")
	id, err1 := strconv.Atoi(idS)
	rating, err2 := strconv.Atoi(ratingS)
	if !ok || err1 != nil || err2 != nil || id < 0 || rating < 1 || rating > 10 {
		return 0, 0, fmt.Errorf("file name %q: want <id>_<rating>.txt with a rating 1..10", file)
	}
	return id, rating, nil
}

// Vocab builds Paddle's imdb word_dict: words of the given reviews
// (Paddle: train and test) seen at least minCount times (Paddle's cutoff
// 150, keeping counts above 150, is minCount 151), by descending count and
// then word, with <unk> appended last.
func Vocab(minCount int, reviews ...[]Review) (*data.Vocab, error) {
	var counts data.Counter
	for _, rs := range reviews {
		for _, r := range rs {
			counts.Add(r.Tokens...)
		}
	}
	return data.BuildVocab(&counts, data.VocabConfig{MinCount: minCount, Unk: data.Unk})
}

// Dataset encodes reviews with v into fields "words", ragged int64
// token ids, and "label", int64 [N].
func Dataset(reviews []Review, v *data.Vocab) (*data.Dataset, error) {
	if v == nil {
		return nil, fmt.Errorf("imdb: Dataset: nil vocabulary")
	}
	words := make([][]int64, len(reviews))
	labels := make([]int64, len(reviews))
	for i, r := range reviews {
		ids, err := v.Encode(r.Tokens)
		if err != nil {
			return nil, fmt.Errorf("imdb: Dataset: review %d: %w", i, err)
		}
		words[i], labels[i] = ids, r.Label
	}
	return data.NewDataset(data.SeqField("words", words), data.DenseField("label", tensor.MustFromSlice(labels, len(labels))))
}
