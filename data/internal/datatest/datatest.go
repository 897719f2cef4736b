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
