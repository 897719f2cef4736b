//go:build unix

package imdb

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// A half-megabyte .tar.gz whose reviews expand into 600 MB of words is
// stopped as a decompression bomb under a 512 MiB address-space cap within
// 10 s.
func TestLoadTarGzBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		bomb := datatest.TarGzBomb(t,
			datatest.BombMember{Name: "aclImdb/train/pos/0_9.txt", Unit: []byte("a b "), Size: 300 << 20},
			datatest.BombMember{Name: "aclImdb/test/neg/0_1.txt", Unit: []byte("a b "), Size: 300 << 20})
		dir := datatest.WriteFiles(t, map[string][]byte{"aclImdb_v1.tar.gz": bomb})
		_, _, err := Load(filepath.Join(dir, "aclImdb_v1.tar.gz"))
		return err
	}, "aclImdb_v1.tar.gz: ", "a decompression bomb")
}

// The member budgets: a review larger than MaxFileBytes is refused from
// its tar header, and more reviews than MaxRecords are refused.
func TestLoadLimits(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"imdb.tar.gz": datatest.TarGz(t, map[string][]byte{
		"aclImdb/train/pos/0_9.txt": []byte("good film"),
		"aclImdb/test/neg/1_2.txt":  []byte("bad film"),
	})})
	src := filepath.Join(dir, "imdb.tar.gz")
	_, _, err := LoadLimits(src, data.Limits{MaxFileBytes: 8})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	assert.ErrorContains(t, err, "aclImdb/train/pos/0_9.txt: declares 9 bytes, more than 8")
	_, _, err = LoadLimits(src, data.Limits{MaxRecords: 1})
	assert.ErrorContains(t, err, "more than 1 kept files")
	train, test, err := LoadLimits(src, data.Limits{MaxRecords: 2})
	require.NoError(t, err)
	assert.Len(t, train, 1)
	assert.Len(t, test, 1)
}
