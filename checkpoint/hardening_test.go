package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/memlimit"
	"github.com/plumbml/plumb/tensor"
)

// sparse writes head at the start of a file of size bytes whose rest is a
// hole (no disk blocks), so a test can have a 5 GB file without writing 5 GB.
func sparse(t testing.TB, path string, head []byte, size int64) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, head, 0o644))
	require.NoError(t, os.Truncate(path, size))
}

// 5 GB checkpoints (sparse files) end in an error, under a 256 MiB cap on
// the address space: the loader that read the whole file first died there
// with "fatal error: out of memory". Load refuses a valid header whose
// 5 GB tensor does not fit the parameter before reading it; Read and Load
// refuse a bad header, or a header length of 4 GB, after reading 8 bytes.
func TestLargeCheckpointUnderMemoryLimit(t *testing.T) {
	const size = 5 << 30
	dir := t.TempDir()
	zeros := filepath.Join(dir, "zeros.safetensors") // header length 0: not JSON
	sparse(t, zeros, nil, size)
	long := filepath.Join(dir, "long.safetensors")
	sparse(t, long, binary.LittleEndian.AppendUint64(nil, 4<<30), size)
	big := filepath.Join(dir, "big.safetensors") // a valid header: one 5 GB tensor
	const hdrLen = 128
	n := (size - 8 - hdrLen) / 4
	hdr := fmt.Sprintf(`{"dense/kernel": {"dtype": "F32", "shape": [%d], "data_offsets": [0, %d]}}`, n, 4*n)
	sparse(t, big, file(fmt.Sprintf("%-*s", hdrLen, hdr)), size)

	msg := memlimit.Run(t, 256, func() error {
		ps := []*graph.Param{graph.NewParam("dense/kernel", tensor.Zeros(tensor.Float32, 3, 2))}
		var errs []error
		for _, p := range []string{zeros, long, big} {
			errs = append(errs, Load(p, ps, nil))
		}
		for _, p := range []string{zeros, long} {
			_, _, err := Read(p)
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	// The child made its own files: match the names, not the directories.
	assert.Contains(t, msg, "zeros.safetensors: header: not a JSON object")
	assert.Contains(t, msg, "long.safetensors: header length 4294967296 exceeds the limit of 100000000 bytes")
	assert.Contains(t, msg, fmt.Sprintf(`big.safetensors: tensor "dense/kernel" is float32[%d] in the file, want float32[3 2]`, n))
	assert.Contains(t, msg, "read ")
	assert.Equal(t, 5, strings.Count(msg, "checkpoint: "), msg)
}

// A flipped bit anywhere in a tensor's data is caught by its checksum, by
// Load (which then writes nothing) and by Read. A file without checksums
// (another writer's) still loads; a malformed checksum is an error.
func TestChecksumCatchesCorruption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	saved := model(t, 1)
	require.NoError(t, Save(path, saved, nil))
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	dataAt := 8 + int(binary.LittleEndian.Uint64(good))
	for _, bit := range []int{0, 7, 8*(len(good)-dataAt) - 1} {
		bad := append([]byte{}, good...)
		bad[dataAt+bit/8] ^= 1 << (bit % 8)
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		ps := model(t, 2)
		before := ps[0].Value.Clone()
		err := Load(path, ps, nil)
		require.ErrorContains(t, err, "the file is corrupt", "bit %d", bit)
		assert.Equal(t, before.Float32s(), ps[0].Value.Float32s(), "nothing written")
		_, _, err = Read(path)
		require.ErrorContains(t, err, "the file is corrupt", "bit %d", bit)
	}

	noSums := filepath.Join(dir, "foreign.safetensors")
	require.NoError(t, os.WriteFile(noSums, file(`{"x": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}}`, 7, 0, 0, 0), 0o644))
	x := graph.NewState("x", tensor.MustFromSlice([]int32{0}))
	require.NoError(t, Load(noSums, []*graph.Param{x}, nil))
	assert.Equal(t, []int32{7}, x.Value.Int32s())

	malformed := filepath.Join(dir, "malformed.safetensors")
	require.NoError(t, os.WriteFile(malformed, file(`{"__metadata__": {"crc32c:x": "zz"}, "x": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}}`, 7, 0, 0, 0), 0o644))
	require.ErrorContains(t, Load(malformed, []*graph.Param{x}, nil), `checksum "zz" in the metadata is not 8 hex digits`)
}

// Temporary files that killed saves left behind are removed by the next
// save to the same path; others' files stay.
func TestSaveRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	stale := []string{".m.safetensors.tmp123", ".m.safetensors.tmp4294967295"}
	kept := []string{".m.safetensors.tmpx", ".other.safetensors.tmp1", "m.safetensors.tmp1", ".m.safetensors.tmp"}
	for _, name := range append(append([]string{}, stale...), kept...) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o600))
	}
	require.NoError(t, Save(filepath.Join(dir, "m.safetensors"), model(t, 1), nil))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, append(kept, "m.safetensors"), names)
}
