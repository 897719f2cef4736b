package text

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorded is one case of testdata/wordpiece/cases.json, written by
// bench/bert_tokenizer.py cases from transformers' BertTokenizer.
type recorded struct {
	A         string   `json:"a"`
	B         *string  `json:"b"`
	MaxLength int      `json:"max_length"`
	IDs       []int    `json:"ids"`
	Types     []int    `json:"types"`
	Tokens    []string `json:"tokens"`
}

// The committed sentences (accents, punctuation, CJK, control and
// zero-width characters, whitespace variants, a 100- and a 101-character
// word, Turkish İ, Greek capitals, unassigned and private-use code points,
// Hangul, kana, emoji, the empty string), alone and in pairs, with and
// without truncation, give transformers' ids, token types and tokens.
func TestMatchesTransformers(t *testing.T) {
	w, err := ReadWordPiece("testdata/wordpiece/vocab.txt", WordPieceConfig{})
	require.NoError(t, err)
	b, err := os.ReadFile("testdata/wordpiece/cases.json")
	require.NoError(t, err)
	var cases []recorded
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, 97)
	for i, c := range cases {
		var e Encoding
		if c.B == nil {
			e, err = w.Encode(c.A, c.MaxLength)
		} else {
			e, err = w.EncodePair(c.A, *c.B, c.MaxLength)
		}
		require.NoError(t, err)
		require.Equal(t, c.IDs, e.IDs, "case %d: %q / %v max %d", i, c.A, c.B, c.MaxLength)
		require.Equal(t, c.Types, e.TypeIDs, "case %d", i)
		tokens := make([]string, len(e.IDs))
		for j, id := range e.IDs {
			tokens[j] = w.Token(id)
		}
		require.Equal(t, c.Tokens, tokens, "case %d", i)
	}
}

func TestWordPieceVocabulary(t *testing.T) {
	w, err := NewWordPiece([]string{"[UNK]", "[CLS]", "[SEP]", "a", "##b", "a", "ab", "##bc", "##c"}, WordPieceConfig{})
	require.NoError(t, err)
	require.Equal(t, 9, w.Len())
	id, ok := w.ID("a")
	require.True(t, ok)
	require.Equal(t, 5, id, "a token listed twice takes its last id")
	require.Equal(t, "##bc", w.Token(7))
	require.Equal(t, "", w.Token(9))
	require.Equal(t, "", w.Token(-1))
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"abc", []string{"ab", "##c"}},   // longest first: ab, then ##c
		{"abbc", []string{"ab", "##bc"}}, // ab, ##bc
		{"abd", []string{"[UNK]"}},       // d matches nothing: the whole word
		{"ABC a", []string{"ab", "##c", "a"}},
		{"a,b", []string{"a", "[UNK]", "[UNK]"}},
	} {
		require.Equal(t, c.want, w.Tokenize(c.in), c.in)
	}

	cased, err := NewWordPiece([]string{"[UNK]", "[CLS]", "[SEP]", "Ab", "é"}, WordPieceConfig{Cased: true, MaxWordChars: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"Ab", "[UNK]", "é", "[UNK]"}, cased.Tokenize("Ab ab é Abc"))
	keep, err := NewWordPiece([]string{"[UNK]", "[CLS]", "[SEP]", "é", "e", "中国"}, WordPieceConfig{KeepAccents: true, NoChineseSplit: true})
	require.NoError(t, err)
	require.Equal(t, []string{"é", "é", "中国"}, keep.Tokenize("É é 中国"))

	_, err = NewWordPiece([]string{"[UNK]", "[SEP]"}, WordPieceConfig{})
	require.ErrorContains(t, err, `special token "[CLS]" is not in the vocabulary of 2 tokens`)
	_, err = NewWordPiece([]string{"<unk>", "[CLS]", "[SEP]"}, WordPieceConfig{Unknown: "<unk>", MaxWordChars: -1})
	require.ErrorContains(t, err, "MaxWordChars=-1")
	_, err = NewWordPiece([]string{"<unk>", "<s>", "</s>"}, WordPieceConfig{Unknown: "<unk>", CLS: "<s>", SEP: "</s>"})
	require.NoError(t, err)
}

func TestEncode(t *testing.T) {
	w, err := NewWordPiece([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d"}, WordPieceConfig{})
	require.NoError(t, err)
	e, err := w.Encode("a b c d", 4)
	require.NoError(t, err)
	require.Equal(t, Encoding{IDs: []int{2, 4, 5, 3}, TypeIDs: []int{0, 0, 0, 0}}, e)
	e, err = w.EncodePair("a b", "c d x", 0)
	require.NoError(t, err)
	require.Equal(t, Encoding{IDs: []int{2, 4, 5, 3, 6, 7, 1, 3}, TypeIDs: []int{0, 0, 0, 0, 1, 1, 1, 1}}, e)
	_, err = w.Encode("a", 1)
	require.ErrorContains(t, err, "max length 1")
	_, err = w.EncodePair("a", "b", 2)
	require.ErrorContains(t, err, "max length 2")
}

// longestFirst keeps the shorter sequence whole when the longer can take
// the rest, else splits the room, the longer (or, on a tie, the second)
// taking the odd piece.
func TestLongestFirst(t *testing.T) {
	for _, c := range []struct{ l1, l2, room, n1, n2 int }{
		{3, 4, 10, 3, 4},
		{2, 10, 6, 2, 4},
		{10, 2, 6, 4, 2},
		{10, 10, 7, 3, 4},
		{10, 9, 7, 4, 3},
		{9, 10, 7, 3, 4},
		{4, 4, 7, 3, 4},
		{0, 9, 5, 0, 5},
		{5, 5, 0, 0, 0},
	} {
		n1, n2 := longestFirst(c.l1, c.l2, c.room)
		require.Equal(t, []int{c.n1, c.n2}, []int{n1, n2}, "%+v", c)
	}
}

func TestReadWordPieceErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadWordPiece(filepath.Join(dir, "none.txt"), WordPieceConfig{})
	require.ErrorContains(t, err, "none.txt")
	long := filepath.Join(dir, "long.txt")
	require.NoError(t, os.WriteFile(long, []byte("[UNK]\n[CLS]\n[SEP]\n"+strings.Repeat("x", 2000)+"\n"), 0o644))
	_, err = ReadWordPiece(long, WordPieceConfig{})
	require.ErrorContains(t, err, "line 4 is over 1024 bytes")
	crlf := filepath.Join(dir, "crlf.txt")
	require.NoError(t, os.WriteFile(crlf, []byte("[UNK] \r\n[CLS]\r\n[SEP]\r\nab"), 0o644))
	w, err := ReadWordPiece(crlf, WordPieceConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"ab"}, w.Tokenize("AB"))
	missing := filepath.Join(dir, "missing.txt")
	require.NoError(t, os.WriteFile(missing, []byte("a\nb\n"), 0o644))
	_, err = ReadWordPiece(missing, WordPieceConfig{})
	require.ErrorContains(t, err, "missing.txt")
	require.ErrorContains(t, err, `"[UNK]"`)
}

// TestIMDB compares the ids of all 25,000 IMDB test reviews with
// transformers' (bench/bert_tokenizer.py ids) when PLUMB_WORDPIECE_IMDB
// names the directory holding vocab.txt and ids.tsv:
//
//	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py vocab /tmp/wp/vocab.txt
//	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py ids /tmp/wp/vocab.txt /tmp/wp/ids.tsv
//	PLUMB_WORDPIECE_IMDB=/tmp/wp go test ./text -run TestIMDB -v
//
// It reads the reviews from ../shared/data/imdb/aclImdb_train_test.tar.gz
// (IMDB overrides the path), requires every review to match
// BertTokenizer's ids and reports how many match BertTokenizerLegacy's;
// with truncated.tsv (bench/bert_tokenizer.py truncated) in the directory
// it also compares truncation to 128 and pairs truncated to 200.
func TestIMDB(t *testing.T) {
	dir := os.Getenv("PLUMB_WORDPIECE_IMDB")
	if dir == "" {
		t.Skip("PLUMB_WORDPIECE_IMDB is not set (bench/bert_tokenizer.py writes the vocabulary and ids)")
	}
	archive := os.Getenv("IMDB")
	if archive == "" {
		archive = "../../shared/data/imdb/aclImdb_train_test.tar.gz"
	}
	w, err := ReadWordPiece(filepath.Join(dir, "vocab.txt"), WordPieceConfig{})
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, "ids.tsv"))
	require.NoError(t, err)
	defer f.Close()
	want := map[string][2]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		require.Len(t, parts, 3)
		want[parts[0]] = [2]string{parts[1], parts[2]}
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, 25000)

	type review struct{ name, text string }
	var reviews []review
	a, err := os.Open(archive)
	require.NoError(t, err)
	defer a.Close()
	gz, err := gzip.NewReader(a)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if _, ok := want[h.Name]; !ok {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
		require.NoError(t, err)
		reviews = append(reviews, review{h.Name, string(b)})
	}
	join := func(ids []int) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.Itoa(id)
		}
		return strings.Join(s, " ")
	}
	seen, legacy, mismatches := 0, 0, 0
	for _, r := range reviews {
		e, err := w.Encode(r.text, 0)
		require.NoError(t, err)
		got := join(e.IDs)
		seen++
		if got != want[r.name][0] {
			mismatches++
			if mismatches <= 5 {
				t.Errorf("%s: ids differ from BertTokenizer's", r.name)
			}
		}
		if got == want[r.name][1] {
			legacy++
		}
	}
	require.Equal(t, 25000, seen)
	t.Logf("%d of %d reviews match BertTokenizer (tokenizers), %d match BertTokenizerLegacy", seen-mismatches, seen, legacy)
	require.Zero(t, mismatches)

	// truncated.tsv (bench/bert_tokenizer.py truncated), when there: each
	// review cut to 128 ids, and paired with the next review cut
	// longest-first to 200.
	tf, err := os.Open(filepath.Join(dir, "truncated.tsv"))
	if os.IsNotExist(err) {
		t.Log("no truncated.tsv: truncation and pairs not compared")
		return
	}
	require.NoError(t, err)
	defer tf.Close()
	trunc := map[string][]string{}
	sc = bufio.NewScanner(tf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		require.Len(t, parts, 4)
		trunc[parts[0]] = parts[1:]
	}
	require.NoError(t, sc.Err())
	require.Len(t, trunc, len(reviews))
	bad := 0
	for i, r := range reviews {
		single, err := w.Encode(r.text, 128)
		require.NoError(t, err)
		pair, err := w.EncodePair(r.text, reviews[(i+1)%len(reviews)].text, 200)
		require.NoError(t, err)
		ref := trunc[r.name]
		if join(single.IDs) != ref[0] || join(pair.IDs) != ref[1] || join(pair.TypeIDs) != ref[2] {
			bad++
			if bad <= 5 {
				t.Errorf("%s: truncated ids or pair differ from BertTokenizer's", r.name)
			}
		}
	}
	t.Logf("%d of %d reviews match BertTokenizer truncated to 128 and paired to 200", len(reviews)-bad, len(reviews))
	require.Zero(t, bad)
}
