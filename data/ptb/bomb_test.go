//go:build unix

package ptb

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// A 0.3 MB gzip that expands into 2.4 GB of short sentences is stopped
// as a decompression bomb under a 512 MiB address-space cap, in seconds.
func TestReadGzipBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		_, err := Read(bytes.NewReader(datatest.GzipBomb(t, nil, []byte("a b c d\n"), 2400<<20)), "ptb.train.txt.gz")
		return err
	}, "ptb.train.txt.gz: ", "a decompression bomb")
}

// The budgets refuse more lines or words than MaxRecords, and a raised
// MaxRatio reads what the default refuses.
func TestReadLimits(t *testing.T) {
	_, err := ReadLimits(bytes.NewReader([]byte("a b\nc d\n")), "f", data.Limits{MaxRecords: 3})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	assert.ErrorContains(t, err, "f: line 2: more than 3 words")
	bomb := datatest.GzipBomb(t, nil, []byte("a\n"), 3<<20)
	_, err = Read(bytes.NewReader(bomb), "g")
	assert.ErrorIs(t, err, readlimit.ErrBomb)
	sents, err := ReadLimits(bytes.NewReader(bomb), "g", data.Limits{MaxRatio: 1 << 20})
	require.NoError(t, err)
	assert.Len(t, sents, 3<<19)
}

// MNIST's gzip IDX file read as PTB is refused as binary data, naming the
// line; it gave one junk sentence.
func TestReadRefusesBinary(t *testing.T) {
	idx := append([]byte{0, 0, 8, 1, 0, 0, 0, 3}, 1, 2, 3)
	_, err := Read(bytes.NewReader(datatest.Gzip(t, idx)), "train-labels-idx1-ubyte.gz")
	assert.ErrorContains(t, err, "ptb: train-labels-idx1-ubyte.gz: line 1 byte 1 is NUL: binary data, want text")
}

// A FIFO named ptb.train.txt is refused at once; Load blocked forever
// opening it.
func TestLoadRefusesFIFO(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"ptb.valid.txt": []byte("a\n"), "ptb.test.txt": []byte("b\n")})
	if err := syscall.Mkfifo(filepath.Join(dir, "ptb.train.txt"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, _, _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "ptb: "+filepath.Join(dir, "ptb.train.txt")+" is a named pipe (FIFO): want a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
	_ = os.Remove(filepath.Join(dir, "ptb.train.txt"))
}

// A negative maxLen is an error; it kept every sentence.
func TestLMDatasetNegativeMaxLen(t *testing.T) {
	v, err := Vocab(1, [][]string{{"a"}})
	require.NoError(t, err)
	_, err = LMDataset([][]string{{"a"}}, v, -1)
	assert.ErrorContains(t, err, "maxLen -1: want 0 (no limit) or more")
}
