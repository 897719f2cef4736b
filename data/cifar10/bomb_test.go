//go:build unix

package cifar10

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// 0.5 MB of gzip that expands into 174,762 records (537 MB) is stopped
// as a decompression bomb under a 512 MiB address-space cap within 10 s.
func TestReadGzipBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		_, err := Read(bytes.NewReader(datatest.GzipBomb(t, nil, make([]byte, cifarRecord), 174762*cifarRecord)), "data_batch_1.bin.gz")
		return err
	}, "data_batch_1.bin.gz: ", "a decompression bomb")
}

// Empty batches are refused (raw, gzip, and through Load), not loaded as
// a 0-image dataset. More records than MaxRecords are refused too.
func TestReadRefusesEmptyAndTooMany(t *testing.T) {
	for name, b := range map[string][]byte{"empty.bin": nil, "empty.bin.gz": datatest.Gzip(t, nil)} {
		_, err := Read(bytes.NewReader(b), name)
		assert.ErrorContains(t, err, "cifar10: "+name+": no records: want one or more 3073-byte records (an empty batch)")
	}
	dir := datatest.WriteFiles(t, map[string][]byte{"data_batch_1.bin": nil, "test_batch.bin": nil})
	_, _, err := Load(dir)
	assert.ErrorContains(t, err, "no records")

	_, err = ReadLimits(bytes.NewReader(make([]byte, 3*cifarRecord)), "three.bin", data.Limits{MaxRecords: 2})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	ds, err := ReadLimits(bytes.NewReader(make([]byte, 3*cifarRecord)), "three.bin", data.Limits{MaxRecords: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, ds.Len())
}
