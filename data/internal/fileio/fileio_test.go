package fileio

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
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
		r, err := Plain(bytes.NewReader(tc.in), tc.name, Limits{MaxFileBytes: tc.limit})
		require.NoError(t, err, tc.name)
		got, err := io.ReadAll(r)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := Plain(nil, "nothing", Limits{})
	assert.ErrorContains(t, err, "nothing: nil reader")
}

func TestEachLine(t *testing.T) {
	var lines []string
	err := EachLine(strings.NewReader("a\r\nb\n\nc"), "f", Limits{}, func(n int, line string) error {
		lines = append(lines, line)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "", "c"}, lines)

	long := strings.Repeat("x", 101)
	err = EachLine(strings.NewReader("ok\n"+long), "f", Limits{MaxLineBytes: 100}, func(int, string) error { return nil })
	assert.ErrorIs(t, err, ErrTooBig)
	assert.ErrorContains(t, err, "f: line 2")

	stop := errors.New("stop")
	err = EachLine(strings.NewReader("a\nb\n"), "f", Limits{}, func(int, string) error { return stop })
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
		err := WalkTree(src, Limits{}, func(name string) bool { return strings.HasSuffix(name, ".txt") }, func(name string, _ int64, r io.Reader) error {
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

// zeros returns one gzip stream of n zero bytes, written in 1 MiB pieces.
func zeros(t testing.TB, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	require.NoError(t, err)
	chunk := make([]byte, 1<<20)
	for ; n > 0; n -= len(chunk) {
		_, err := zw.Write(chunk[:min(n, len(chunk))])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// A gzip stream that expands a thousandfold stops after the slack, with
// an error wrapping ErrBomb; the same bytes stored raw are read whole.
func TestPlainStopsBombs(t *testing.T) {
	r, err := Plain(bytes.NewReader(zeros(t, 64<<20)), "bomb.gz", Limits{})
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, r)
	assert.ErrorIs(t, err, readlimit.ErrBomb)
	assert.ErrorContains(t, err, "bomb.gz: ")
	assert.Less(t, n, int64(2<<20))

	r, err = Plain(bytes.NewReader(zeros(t, 4<<20)), "ok.gz", Limits{MaxRatio: 10000})
	require.NoError(t, err)
	n, err = io.Copy(io.Discard, r)
	require.NoError(t, err, "a raised ratio reads it")
	assert.Equal(t, int64(4<<20), n)
}

// EachLine refuses binary data (a NUL byte) and more lines than
// MaxRecords, naming the line.
func TestEachLineRefusesBinaryAndTooManyLines(t *testing.T) {
	nop := func(int, string) error { return nil }
	err := EachLine(strings.NewReader("text\n\x00\x00\x08\x03"), "f", Limits{}, nop)
	assert.ErrorContains(t, err, "f: line 2 byte 1 is NUL")
	err = EachLine(strings.NewReader("a\nb\nc\n"), "f", Limits{MaxRecords: 2}, nop)
	assert.ErrorIs(t, err, ErrTooBig)
	assert.ErrorContains(t, err, "more than 2 lines")
}

// Archive members are checked from their headers: a member larger than
// MaxFileBytes, a zip member declaring more than MaxRatio times its
// compressed size, a name leaving the archive, and more members than
// MaxRecords are errors before the member is read.
func TestWalkTreeMemberBudgets(t *testing.T) {
	big := make([]byte, 4<<20)
	dir := datatest.WriteFiles(t, map[string][]byte{
		"big.tar.gz": datatest.TarGz(t, map[string][]byte{"set/a.txt": big}),
		"big.zip":    zipOf(t, map[string][]byte{"set/a.txt": big}),
		"up.tar.gz":  datatest.TarGz(t, map[string][]byte{"../x.txt": []byte("x")}),
		"up.zip":     zipOf(t, map[string][]byte{"../x.txt": []byte("x")}),
		"two.zip":    zipOf(t, map[string][]byte{"a.txt": []byte("a"), "b.txt": []byte("b")}),
	})
	all := func(string) bool { return true }
	for _, c := range []struct {
		file string
		lim  Limits
		want string
		is   error
	}{
		{"big.tar.gz", Limits{MaxFileBytes: 1 << 20}, "set/a.txt: declares 4194304 bytes, more than 1048576", ErrTooBig},
		{"big.zip", Limits{MaxFileBytes: 1 << 20}, "set/a.txt: declares 4194304 bytes", ErrTooBig},
		{"big.zip", Limits{}, "set/a.txt: ", readlimit.ErrBomb},
		{"up.tar.gz", Limits{}, `member "../x.txt" leaves the archive`, nil},
		{"up.zip", Limits{}, `member "../x.txt" leaves the archive`, nil},
		{"two.zip", Limits{MaxRecords: 1}, "more than 1 kept files", ErrTooBig},
	} {
		read := false
		err := WalkTree(filepath.Join(dir, c.file), c.lim, all, func(string, int64, io.Reader) error { read = true; return nil })
		assert.ErrorContains(t, err, c.want, c.file)
		if c.is != nil {
			assert.ErrorIs(t, err, c.is, c.file)
		}
		if c.file != "two.zip" {
			assert.False(t, read, "%s: the member was handed on", c.file)
		}
	}
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, err = w.Write(files[n])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
