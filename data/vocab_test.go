package data

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/internal/datatest"
)

func TestBuildVocab(t *testing.T) {
	var counts Counter
	counts.Add(strings.Fields("b a c a b a d <unk> <unk> <unk> <unk> e")...)
	tests := []struct {
		name string
		cfg  VocabConfig
		want []string
	}{
		// Descending count, ties by word; <unk> (Unk) is not counted and goes last: Paddle's build_dict.
		{name: "paddle imdb layout", cfg: VocabConfig{Unk: Unk}, want: []string{"a", "b", "c", "d", "e", Unk}},
		{name: "min count", cfg: VocabConfig{MinCount: 2, Unk: Unk}, want: []string{"a", "b", Unk}},
		{name: "top n", cfg: VocabConfig{MaxWords: 3, Unk: Unk}, want: []string{"a", "b", "c", Unk}},
		{name: "specials first", cfg: VocabConfig{MaxWords: 2, Specials: []string{BOS, EOS, Unk}, Unk: Unk}, want: []string{BOS, EOS, Unk, "a", "b"}},
		{name: "pad", cfg: VocabConfig{MinCount: 3, Specials: []string{Pad}}, want: []string{Pad, Unk, "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := BuildVocab(&counts, tc.cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.Words())
		})
	}
	_, err := BuildVocab(&counts, VocabConfig{MinCount: -1})
	assert.ErrorContains(t, err, "cannot be negative")
}

func TestVocabEncodeDecodeSaveLoad(t *testing.T) {
	v, err := NewVocab([]string{"<s>", "the", "cat", "<unk>"}, Unk)
	require.NoError(t, err)
	ids, err := v.Encode([]string{"the", "dog", "cat"})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 2}, ids)
	words, err := v.Decode(ids)
	require.NoError(t, err)
	assert.Equal(t, []string{"the", "<unk>", "cat"}, words)
	_, err = v.Decode([]int64{4})
	assert.ErrorContains(t, err, "id 4 at 0 outside the vocabulary [0, 4)")
	assert.Equal(t, "", v.Word(-1))
	assert.Equal(t, 3, v.UnkID())

	var buf bytes.Buffer
	require.NoError(t, v.Save(&buf))
	assert.Equal(t, "<s>\nthe\ncat\n<unk>\n", buf.String())
	back, err := LoadVocab(bytes.NewReader(buf.Bytes()), "vocab.txt", Unk)
	require.NoError(t, err)
	assert.Equal(t, v.Words(), back.Words())
	gz, err := LoadVocab(bytes.NewReader(datatest.Gzip(t, buf.Bytes())), "vocab.txt.gz", Unk)
	require.NoError(t, err)
	assert.Equal(t, v.Words(), gz.Words())

	strict, err := NewVocab([]string{"a"}, "")
	require.NoError(t, err)
	_, err = strict.Encode([]string{"a", "b"})
	assert.ErrorContains(t, err, `token 1 "b" is not in the vocabulary`)
	assert.Equal(t, -1, strict.ID("b"))

	for _, tc := range []struct {
		text, unk, wantErr string
	}{
		{"a\nb\na\n", "", `d.txt: token "a" on lines 1 and 3: want each token once`},
		{"a\nb\n", Unk, `lacks its unknown token "<unk>"`},
	} {
		_, err := LoadVocab(strings.NewReader(tc.text), "d.txt", tc.unk)
		assert.ErrorContains(t, err, tc.wantErr)
		assert.ErrorContains(t, err, "d.txt")
	}
	_, err = NewVocab([]string{"a\nb"}, "")
	assert.ErrorContains(t, err, "line break")
	_, err = LoadVocab(strings.NewReader(" \x1f\x8bz\nb\n"), "d.txt", "")
	assert.ErrorContains(t, err, "gzip magic")
	_, err = NewVocab([]string{"b", "\x1f\x8b"}, "")
	assert.NoError(t, err, "only word 0 begins the saved file")
}

// FuzzLoadVocab: any bytes give a vocabulary or an error, never a panic,
// and a loaded vocabulary saves back to what loads the same.
func FuzzLoadVocab(f *testing.F) {
	f.Add([]byte("<s>\nthe\ncat\n<unk>\n"))
	f.Add([]byte("a\r\nb\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := LoadVocab(bytes.NewReader(b), "fuzz", "")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		require.NoError(t, v.Save(&buf))
		back, err := LoadVocab(&buf, "fuzz", "")
		require.NoError(t, err)
		require.Equal(t, v.Words(), back.Words())
	})
}

func TestVocabRequire(t *testing.T) {
	v, err := NewVocab([]string{BOS, EOS, "a"}, "")
	require.NoError(t, err)
	tests := []struct {
		name   string
		v      *Vocab
		tokens []string
		want   string // "" for no error
	}{
		{"present", v, []string{BOS, EOS}, ""},
		{"none asked", v, nil, ""},
		{"missing", v, []string{BOS, Unk}, `lacks "<unk>"`},
		{"nil", nil, []string{BOS}, "nil vocabulary"},
	}
	for _, tc := range tests {
		err := tc.v.Require(tc.tokens...)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
		} else {
			assert.ErrorContains(t, err, tc.want, tc.name)
		}
	}
}
