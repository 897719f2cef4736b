// Package fileio opens the files that Plumb's corpus readers read: raw or
// gzip files, folders, and tar, tar.gz or zip archives, each capped so
// that a reader's memory stays proportional to real data. It is shared by
// package data (vocabularies, line streams) and the readers under data/.
package fileio

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits that keep every reader's memory proportional to real data: a
// gzip stream may expand a thousandfold, so decompression stops with an
// error past these sizes instead of filling memory.
const (
	// MaxFileBytes bounds one decompressed file (a text corpus, a CIFAR
	// batch, one tar member). The largest real ones are about 30 MB.
	MaxFileBytes = 1 << 30
	// MaxArchiveBytes bounds a whole decompressed archive (the IMDB tar
	// with its unlabelled reviews is about 0.5 GB).
	MaxArchiveBytes = 4 << 30
	// MaxLineBytes bounds one line of a text format.
	MaxLineBytes = 1 << 20
)

// GzipMagic starts every gzip stream (RFC 1952).
var GzipMagic = []byte{0x1f, 0x8b}

// ErrTooBig is wrapped by every "past the limit" error.
var ErrTooBig = errors.New("larger than the reader's limit")

// capReader fails once more than limit bytes have been read.
type capReader struct {
	r     io.Reader
	name  string
	limit int64
	n     int64
}

func (c *capReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.n > c.limit {
		return k, fmt.Errorf("%s: more than %d bytes: %w", c.name, c.limit, ErrTooBig)
	}
	return k, err
}

// Plain returns r's content, gunzipped when it starts with the gzip magic,
// and capped at limit bytes. name labels errors.
func Plain(r io.Reader, name string, limit int64) (io.Reader, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: nil reader", name)
	}
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && bytes.Equal(head, GzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		return &capReader{r: zr, name: name, limit: limit}, nil
	}
	return &capReader{r: br, name: name, limit: limit}, nil
}

// WithRaw opens the file at p and hands it, as stored, to fn (for the
// Read functions, which decompress themselves).
func WithRaw(p string, fn func(r io.Reader) error) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// WithFile opens the file at p (raw or gzip) and hands its content,
// capped at limit bytes, to fn.
func WithFile(p string, limit int64, fn func(r io.Reader) error) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := Plain(f, p, limit)
	if err != nil {
		return err
	}
	return fn(r)
}

// EachLine calls fn with every line of r (1-based numbers, without the line
// ending). A line longer than MaxLineBytes is an error naming name.
func EachLine(r io.Reader, name string, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s: line %d longer than %d bytes: %w", name, n+1, MaxLineBytes, ErrTooBig)
		}
		return fmt.Errorf("%s: after line %d: %w", name, n, err)
	}
	return nil
}

func isTar(p string) bool {
	return strings.HasSuffix(p, ".tar") || strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz")
}

// WalkTree calls fn for every regular file of src, which is a directory, a
// tar archive (.tar, .tar.gz, .tgz) or a zip file, with its slash-separated
// path relative to src (or as stored in the archive, without a leading
// "./") and its content capped at MaxFileBytes (a whole tar at
// MaxArchiveBytes). A directory is walked in lexical order, an archive in
// stored order. keep filters the paths worth opening.
func WalkTree(src string, keep func(name string) bool, fn func(name string, r io.Reader) error) error {
	switch {
	case isTar(src):
		return WithFile(src, MaxArchiveBytes, func(r io.Reader) error { return walkTar(r, src, keep, fn) })
	case strings.HasSuffix(src, ".zip"):
		return walkZip(src, keep, fn)
	}
	fsys := os.DirFS(src)
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		if !d.Type().IsRegular() || !keep(name) {
			return nil
		}
		return WithFile(filepath.Join(src, filepath.FromSlash(name)), MaxFileBytes, func(r io.Reader) error { return fn(name, r) })
	})
}

// walkTar is WalkTree over a tar stream (already decompressed) named src.
func walkTar(r io.Reader, src string, keep func(name string) bool, fn func(name string, r io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: tar: %w", src, err)
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if h.Typeflag != tar.TypeReg || !keep(name) {
			continue
		}
		if err := fn(name, &capReader{r: tr, name: src + ":" + name, limit: MaxFileBytes}); err != nil {
			return err
		}
	}
}

// walkZip is WalkTree over a zip file.
func walkZip(src string, keep func(name string) bool, fn func(name string, r io.Reader) error) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("%s: zip: %w", src, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		name := strings.TrimPrefix(path.Clean(f.Name), "./")
		if !f.Mode().IsRegular() || !keep(name) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s: zip member %s: %w", src, name, err)
		}
		err = fn(name, &capReader{r: rc, name: src + ":" + name, limit: MaxFileBytes})
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// FindPath returns the first of dir/candidate that exists (each candidate
// may be a file or a folder), or an error listing what was tried.
func FindPath(dir string, candidates ...string) (string, error) {
	for _, c := range candidates {
		p := filepath.Join(dir, filepath.FromSlash(c))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s found in %s: %w", strings.Join(candidates, ", "), dir, fs.ErrNotExist)
}

func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
