//go:build unix

package conll05

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// square returns one sentence of n words, each a predicate, whose n
// argument columns are all "*": n examples of n labels from n×n tokens.
func square(n int) (words, props []byte) {
	var w, p strings.Builder
	row := strings.Repeat(" *", n)
	for range n {
		w.WriteString("w\n")
		p.WriteString("v")
		p.WriteString(row)
		p.WriteString("\n")
	}
	return []byte(w.String()), []byte(p.String())
}

// 28 KB-class gzip props of a 3,000-predicate sentence (18 MB of "*")
// are stopped as a decompression bomb under a 512 MiB cap within 10 s;
// they gave 3,000 examples at 459 MB.
func TestReadGzipBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		w, p := square(3000)
		_, err := Read(bytes.NewReader(datatest.Gzip(t, w)), bytes.NewReader(datatest.Gzip(t, p)), "test.wsj.words.gz", "test.wsj.props.gz")
		return err
	}, "test.wsj.", "a decompression bomb")
}

// The examples of one sentence share its words, and equal labels one
// string, so memory follows the input: 300 predicates over 300 words
// allocate about what their labels need, not a copy of the words each.
func TestReadIsLinear(t *testing.T) {
	w, p := square(300)
	exs, err := Read(bytes.NewReader(w), bytes.NewReader(p), "w", "p")
	require.NoError(t, err)
	require.Len(t, exs, 300)
	assert.Same(t, &exs[0].Words[0], &exs[299].Words[0], "one sentence, one words slice")
	assert.Equal(t, len(exs[0].Words), cap(exs[0].Words), "an append to one example's words copies")

	_, err = ReadLimits(bytes.NewReader(w), bytes.NewReader(p), "w", "p", data.Limits{MaxRecords: 300*300 - 1})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	assert.ErrorContains(t, err, "p sentence at line 1: more than 89999 labels")
}

// An argument still open at the sentence's end is an error naming the
// line and column where it opened; "(A0*" was accepted.
func TestReadRefusesUnclosedArgument(t *testing.T) {
	words := "The\ncat\nsat\n\n"
	props := "- (A0*\n- *\nsit (V*)\n\n"
	_, err := Read(strings.NewReader(words), strings.NewReader(props), "w", "p")
	assert.ErrorContains(t, err, `conll05: p line 1 column 2: argument (A0* of line 3 is never closed: "(V*)" opens another`)
	props = "sit (A0*\n- *\n- *\n\n"
	_, err = Read(strings.NewReader(words), strings.NewReader(props), "w", "p")
	assert.ErrorContains(t, err, "conll05: p line 1 column 2: argument (A0* is never closed: want *) before the sentence ends at line 3")
}
