//go:build unix

package parallel

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// 1.6 MB of gzip per side that expands into 1.5 GB of one-letter words is
// stopped as a decompression bomb under a 512 MiB address-space cap within
// 10 s.
func TestReadGzipBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		side := datatest.GzipBomb(t, nil, []byte("a b c\n"), 1500<<20)
		_, err := Read(bytes.NewReader(side), bytes.NewReader(side), "train.en.gz", "train.de.gz", nil)
		return err
	}, "train.en.gz: ", "a decompression bomb")
}

// More tokens than MaxRecords are refused, naming the line.
func TestReadLimits(t *testing.T) {
	_, err := ReadLimits(bytes.NewReader([]byte("a b\nc d\n")), bytes.NewReader([]byte("x\ny\n")), "s", "t", nil, data.Limits{MaxRecords: 3})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	assert.ErrorContains(t, err, "s: line 2: more than 3 tokens")
}

// A negative maxLen is an error; Dataset(maxLen -1) returned no error.
func TestDatasetNegativeMaxLen(t *testing.T) {
	v, err := Vocab([]Pair{{Src: []string{"a"}, Trg: []string{"b"}}}, false, 0, 1)
	require.NoError(t, err)
	_, err = Dataset(nil, v, v, -1)
	assert.ErrorContains(t, err, "parallel: Dataset: maxLen -1: want 0 (no limit) or more")
}
