package conll05

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

// A sentence without predicates, then one with two ("fall" and "plunge"),
// in the CoNLL-05 column layout.
const (
	tinyWords = "No\n,\n\nPrices\nfall\nand\nplunge\ntoday\n\n"
	tinyProps = "-  \n-  \n\n" +
		"-        (A1*)     (A1*)\n" +
		"fall     (V*)      *\n" +
		"-        *         *\n" +
		"plunge   *         (V*)\n" +
		"-        (AM-TMP*  (AM-TMP*)\n" +
		"\n"
)

func TestReadCoNLL05(t *testing.T) {
	props := strings.Replace(tinyProps, "(AM-TMP*  (AM-TMP*)", "(AM-TMP*)  (AM-TMP*)", 1)
	for _, gz := range []bool{false, true} {
		w, p := []byte(tinyWords), []byte(props)
		if gz {
			w, p = datatest.Gzip(t, w), datatest.Gzip(t, p)
		}
		exs, err := Read(bytes.NewReader(w), bytes.NewReader(p), "w", "p")
		require.NoError(t, err)
		words := []string{"Prices", "fall", "and", "plunge", "today"}
		assert.Equal(t, []Example{
			{Words: words, Predicate: "fall", Labels: []string{"B-A1", "B-V", "O", "O", "B-AM-TMP"}},
			{Words: words, Predicate: "plunge", Labels: []string{"B-A1", "O", "O", "B-V", "B-AM-TMP"}},
		}, exs)
	}
	// A multi-word argument: (A1* opens, * continues, *) closes.
	exs, err := Read(strings.NewReader("a\nb\nc\nd\ne"), strings.NewReader("-  (A0*\n-  *\n-  *)\nrun (V*)\n-  *"), "w", "p")
	require.NoError(t, err)
	require.Len(t, exs, 1, "the last sentence needs no closing empty line")
	assert.Equal(t, []string{"B-A0", "I-A0", "I-A0", "B-V", "O"}, exs[0].Labels)
}

func TestReadCoNLL05Errors(t *testing.T) {
	tests := []struct {
		name, words, props, wantErr string
	}{
		{name: "lengths", words: "a\nb\n", props: "- *\n", wantErr: "w and p differ in length: only one has line 2"},
		{name: "columns", words: "a\nb\n", props: "run (V*)\n- * *\n", wantErr: "p line 2 has 3 columns, the sentence's first line 1 has 2"},
		{name: "predicates", words: "a\nb\n", props: "run (V*)\nwalk *\n", wantErr: "names 2 predicates but has 1 argument columns"},
		{name: "label", words: "a\n", props: "run (V*))\n", wantErr: `p line 1 column 2: unexpected label "(V*))"`},
		{name: "close", words: "a\n", props: "run *)\n", wantErr: `"*)" closes no argument`},
		{name: "empty tag", words: "a\n", props: "run (*\n", wantErr: `bad argument "(*"`},
		{name: "empty word", words: "a\n\n", props: "run (V*)\n- *\n", wantErr: "w line 2 is empty inside a sentence"},
		{name: "empty props", words: "a\nb\n", props: "run (V*)\n\n", wantErr: `w line 2 has word "b" but p line 2 is empty`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.words), strings.NewReader(tc.props), "w", "p")
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestSRLLabelVocabAndDataset(t *testing.T) {
	labels, err := LabelVocab(strings.NewReader("B-A1\nB-V\nI-A1\nI-V\nB-AM-TMP\nI-AM-TMP\nO\n"), "targetDict.txt")
	require.NoError(t, err)
	assert.Equal(t, []string{"B-A1", "I-A1", "B-V", "I-V", "B-AM-TMP", "I-AM-TMP", "O"}, labels.Words())
	verbs, err := data.NewVocab([]string{"plunge", "fall"}, "")
	require.NoError(t, err)
	words, err := data.NewVocab([]string{data.Unk, "bos", "eos", "Prices", "fall", "and", "plunge"}, data.Unk)
	require.NoError(t, err)
	props := strings.Replace(tinyProps, "(AM-TMP*  (AM-TMP*)", "(AM-TMP*)  (AM-TMP*)", 1)
	exs, err := Read(strings.NewReader(tinyWords), strings.NewReader(props), "w", "p")
	require.NoError(t, err)
	ds, err := Dataset(exs, words, verbs, labels)
	require.NoError(t, err)
	require.Equal(t, 2, ds.Len())
	seq := func(field string, i int) []int64 {
		s, err := ds.Ragged(field).Seq(i)
		require.NoError(t, err)
		return s.Int64s()
	}
	// Prices fall and plunge today: "today" is unknown (0).
	assert.Equal(t, []int64{3, 4, 5, 6, 0}, seq("word", 0))
	// Predicate "fall" at 1: n2 = bos, n1 = Prices, 0 = fall, p1 = and, p2 = plunge.
	for field, want := range map[string]int64{"ctx_n2": 1, "ctx_n1": 3, "ctx_0": 4, "ctx_p1": 5, "ctx_p2": 6, "verb": 1} {
		assert.Equal(t, []int64{want, want, want, want, want}, seq(field, 0), field)
	}
	assert.Equal(t, []int64{1, 1, 1, 1, 0}, seq("mark", 0))
	assert.Equal(t, []int64{0, 2, 6, 6, 4}, seq("label", 0))
	// Predicate "plunge" at 3: p2 falls past the end: eos.
	assert.Equal(t, []int64{2, 2, 2, 2, 2}, seq("ctx_p2", 1))
	assert.Equal(t, []int64{0, 1, 1, 1, 1}, seq("mark", 1))
	assert.Equal(t, []int64{0, 0, 0, 0, 0}, seq("verb", 1))

	noVerb := []Example{{Words: []string{"a"}, Predicate: "fall", Labels: []string{"O"}}}
	_, err = Dataset(noVerb, words, verbs, labels)
	assert.ErrorContains(t, err, "has no B-V tag")
	unknownVerb := []Example{{Words: []string{"a"}, Predicate: "sing", Labels: []string{"B-V"}}}
	_, err = Dataset(unknownVerb, words, verbs, labels)
	assert.ErrorContains(t, err, `predicate "sing" is not in the verb dictionary`)
	unknownTag := []Example{{Words: []string{"a", "b"}, Predicate: "fall", Labels: []string{"B-V", "B-A9"}}}
	_, err = Dataset(unknownTag, words, verbs, labels)
	assert.ErrorContains(t, err, `"B-A9" is not in the vocabulary`)
}

func TestLoadCoNLL05AndDicts(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{
		"conll05st-release/test.wsj/words/test.wsj.words.gz": datatest.Gzip(t, []byte(tinyWords)),
		"conll05st-release/test.wsj/props/test.wsj.props.gz": datatest.Gzip(t, []byte(strings.Replace(tinyProps, "(AM-TMP*  (AM-TMP*)", "(AM-TMP*)  (AM-TMP*)", 1))),
		"paddle_dicts/verbDict.txt":                          []byte("plunge\nfall\n"),
		"paddle_dicts/targetDict.txt":                        []byte("B-A1\nB-V\nI-A1\nI-V\nO\n"),
	})
	exs, err := Load(dir, "test.wsj")
	require.NoError(t, err)
	assert.Len(t, exs, 2)
	words, verbs, labels, err := LoadDicts(dir)
	require.NoError(t, err)
	assert.Nil(t, words, "no wordDict.txt")
	assert.Equal(t, 1, verbs.ID("fall"))
	assert.Equal(t, []string{"B-A1", "I-A1", "B-V", "I-V", "O"}, labels.Words())
	_, err = Load(dir, "test.brown")
	assert.ErrorContains(t, err, "test.brown.words")
}

// The real CoNLL-05 test sets: sentence and proposition counts of the
// README (5.), and every tag in Paddle's targetDict.txt.
func TestRealCoNLL05(t *testing.T) {
	dir := datatest.RealPath(t, "conll05")
	_, verbs, labels, err := LoadDicts(dir)
	require.NoError(t, err)
	assert.Equal(t, 3162, verbs.Len())
	// targetDict.txt's 105 B-/I- lines name 54 tags; Paddle's load_label_dict gives each a B- and an I- id, then O.
	assert.Equal(t, 109, labels.Len())
	for _, c := range []struct {
		set   string
		props int
	}{{"test.wsj", 5267}, {"test.brown", 804}} {
		exs, err := Load(dir, c.set)
		require.NoError(t, err)
		assert.Equal(t, c.props, len(exs), c.set)
		sentences, tokens := 0, 0
		unknownVerbs := 0
		for i, ex := range exs {
			if i == 0 || !sameWords(ex.Words, exs[i-1].Words) {
				sentences++
				tokens += len(ex.Words)
			}
			n := 0
			for _, l := range ex.Labels {
				if l == "B-V" {
					n++
				}
				require.True(t, labels.Has(l), "tag %q of %s example %d", l, c.set, i)
			}
			require.Equal(t, 1, n, "one B-V per proposition")
			if !verbs.Has(ex.Predicate) {
				unknownVerbs++
			}
		}
		t.Logf("CoNLL-05 %s: %d propositions over %d sentences with predicates (%d tokens); %d predicates outside verbDict.txt",
			c.set, len(exs), sentences, tokens, unknownVerbs)
	}
}

func sameWords(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") }

// FuzzReadCoNLL05: any words and props give examples whose tags line up
// with the words, or an error; never a panic.
func FuzzReadCoNLL05(f *testing.F) {
	f.Add([]byte(tinyWords), []byte(tinyProps))
	f.Add([]byte("a\nb\nc"), []byte("-  (A0*\n-  *\n-  *)"))
	f.Fuzz(func(t *testing.T, words, props []byte) {
		exs, err := Read(bytes.NewReader(words), bytes.NewReader(props), "w", "p")
		if err != nil {
			return
		}
		for _, ex := range exs {
			require.Equal(t, len(ex.Words), len(ex.Labels))
			for _, l := range ex.Labels {
				require.True(t, l == "O" || strings.HasPrefix(l, "B-") || strings.HasPrefix(l, "I-"), l)
			}
		}
	})
}
