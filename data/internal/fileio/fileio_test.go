package fileio

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/internal/datatest"
)

func TestPlain(t *testing.T) {
	text := []byte("hello, world\n")
	tests := []struct {
		name  string
		in    []byte
		limit int64
		want  []byte
		err   error
	}{
		{"raw", text, 100, text, nil},
		{"gzip", datatest.Gzip(t, text), 100, text, nil},
		{"raw past the limit", text, 5, nil, ErrTooBig},
		{"gzip past the limit", datatest.Gzip(t, text), 5, nil, ErrTooBig},
	}
	for _, tc := range tests {
		r, err := Plain(bytes.NewReader(tc.in), tc.name, tc.limit)
		require.NoError(t, err, tc.name)
		got, err := io.ReadAll(r)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := Plain(nil, "nothing", 1)
	assert.ErrorContains(t, err, "nothing: nil reader")
}

func TestEachLine(t *testing.T) {
	var lines []string
	err := EachLine(strings.NewReader("a\r\nb\n\nc"), "f", func(n int, line string) error {
		lines = append(lines, line)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "", "c"}, lines)

	long := strings.Repeat("x", MaxLineBytes+1)
	err = EachLine(strings.NewReader("ok\n"+long), "f", func(int, string) error { return nil })
	assert.ErrorIs(t, err, ErrTooBig)
	assert.ErrorContains(t, err, "f: line 2")

	stop := errors.New("stop")
	err = EachLine(strings.NewReader("a\nb\n"), "f", func(int, string) error { return stop })
	assert.ErrorIs(t, err, stop)
}

func zipBytes(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"set/a.txt", "set/b.txt", "set/skip.bin"} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// WalkTree gives the same files, filtered by keep, from a folder, a
// .tar.gz and a .zip.
func TestWalkTree(t *testing.T) {
	files := map[string][]byte{"set/a.txt": []byte("A"), "set/b.txt": []byte("B"), "set/skip.bin": []byte("S")}
	dir := datatest.WriteFiles(t, files)
	archives := datatest.WriteFiles(t, map[string][]byte{"set.tar.gz": datatest.TarGz(t, files), "set.zip": zipBytes(t, files)})
	for _, src := range []string{dir, filepath.Join(archives, "set.tar.gz"), filepath.Join(archives, "set.zip")} {
		got := map[string]string{}
		err := WalkTree(src, func(name string) bool { return strings.HasSuffix(name, ".txt") }, func(name string, r io.Reader) error {
			b, err := io.ReadAll(r)
			got[name] = string(b)
			return err
		})
		require.NoError(t, err, src)
		assert.Equal(t, map[string]string{"set/a.txt": "A", "set/b.txt": "B"}, got, src)
	}
}

func TestFindPath(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"b/x.txt": []byte("x")})
	p, err := FindPath(dir, "a", "b/x.txt", "b")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "b", "x.txt"), p)
	assert.True(t, IsFile(p))
	assert.True(t, IsDir(filepath.Join(dir, "b")))
	assert.False(t, IsDir(p))

	_, err = FindPath(dir, "a", "c")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "none of a, c found in "+dir)

	err = WithRaw(filepath.Join(dir, "missing"), func(io.Reader) error { return nil })
	assert.ErrorIs(t, err, os.ErrNotExist)
}
