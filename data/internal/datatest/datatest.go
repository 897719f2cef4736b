// Package datatest holds the helpers that the tests of package data and of
// the corpus readers under data/ share: temporary files and archives, gzip
// streams, and the path of a real corpus under $PLUMB_DATA.
package datatest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// EnvDir is data.EnvDir, the variable that points at the real corpora
// (repeated here because data's own tests import this package).
const EnvDir = "PLUMB_DATA"

// RealPath returns $PLUMB_DATA/rel for a test that checks a reader on the
// real files, and skips the test, saying why, when PLUMB_DATA is not set or
// the file is not there.
func RealPath(t *testing.T, rel string) string {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skipf("%s is not set: skipping the check on the real %s (point it at the shared data folder to run it)", EnvDir, rel)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not found under %s=%s: skipping the check on the real files (%v)", rel, EnvDir, dir, err)
	}
	return p
}

// WriteFiles writes name -> content under a new temporary folder and returns it.
func WriteFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	return dir
}

// TarGz packs name -> content, in name order, into a .tar.gz.
func TarGz(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write(files[n])
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// Gzip compresses b into one gzip stream.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// gzipMember compresses b into one gzip member at the best compression.
func gzipMember(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// repeatTo returns unit repeated to n bytes (the last copy cut short).
func repeatTo(unit []byte, n int) []byte {
	b := bytes.Repeat(unit, n/len(unit)+1)
	return b[:n]
}

// GzipBomb returns a gzip file that expands into head and then unit
// repeated to n bytes: one member of head, then members of 1 MiB of unit
// each (a gzip reader joins members), so it costs milliseconds to build
// and about a kilobyte per expanded megabyte.
func GzipBomb(t testing.TB, head, unit []byte, n int64) []byte {
	t.Helper()
	const chunk = 1 << 20
	size := chunk - chunk%len(unit) // each member holds whole units
	full := gzipMember(t, repeatTo(unit, size))
	out := gzipMember(t, head)
	for ; n >= int64(size); n -= int64(size) {
		out = append(out, full...)
	}
	return append(out, gzipMember(t, repeatTo(unit, int(n)))...)
}

// BombMember is one member of TarGzBomb: name holding unit repeated to
// Size bytes.
type BombMember struct {
	Name string
	Unit []byte
	Size int64
}

// TarGzBomb returns a .tar.gz of the members, built as GzipBomb builds
// its stream: it costs about a kilobyte per expanded megabyte.
func TarGzBomb(t testing.TB, members ...BombMember) []byte {
	t.Helper()
	var out []byte
	for _, m := range members {
		var hdr bytes.Buffer
		tw := tar.NewWriter(&hdr)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: m.Name, Mode: 0o644, Size: m.Size, Typeflag: tar.TypeReg}))
		// WriteHeader wrote the header blocks (and no content): hdr holds them.
		out = append(out, GzipBomb(t, hdr.Bytes(), m.Unit, m.Size)...)
		if pad := (512 - m.Size%512) % 512; pad > 0 {
			out = append(out, gzipMember(t, make([]byte, pad))...)
		}
	}
	return append(out, gzipMember(t, make([]byte, 1024))...) // the end-of-archive blocks
}
