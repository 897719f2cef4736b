// Package fileio opens the files that Plumb's corpus readers read: raw or
// gzip files, folders, and tar, tar.gz or zip archives, each through the
// budgets of a readlimit.Limits (expansion ratio, bytes a file and a
// call, line length, records), checked before the memory they guard is
// allocated, so that a reader's memory stays proportional to real data.
// It refuses what cannot be a corpus file: a named pipe or device (which
// would block or never end), binary bytes in a text line, and archive
// members whose names leave the archive. It is shared by package data
// (vocabularies, line streams) and the readers under data/.
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

	"github.com/plumbml/plumb/internal/readlimit"
)

// Limits are the readers' budgets (see readlimit.Limits); a zero field
// takes its default.
type Limits = readlimit.Limits

// GzipMagic starts every gzip stream (RFC 1952).
var GzipMagic = []byte{0x1f, 0x8b}

// ErrTooBig is wrapped by every "past the limit" error.
var ErrTooBig = readlimit.ErrTooBig

// Plain returns r's content, gunzipped when it starts with the gzip magic,
// and capped at lim.MaxFileBytes; a gzip stream that expands more than
// lim.MaxRatio times is stopped as a decompression bomb. name labels
// errors.
func Plain(r io.Reader, name string, lim Limits) (io.Reader, error) {
	return PlainBudget(r, name, lim, nil)
}

// PlainBudget is Plain whose bytes also draw on total (nil: none), the
// budget of a call that reads several files.
func PlainBudget(r io.Reader, name string, lim Limits, total *readlimit.Budget) (io.Reader, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: nil reader", name)
	}
	lim = lim.Resolve()
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && bytes.Equal(head, GzipMagic) {
		in := &readlimit.Counter{R: br}
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		z := readlimit.Ratio(zr, func() int64 { return in.N }, name, lim.MaxRatio)
		return readlimit.Cap(z, name, lim.MaxFileBytes, total), nil
	}
	return readlimit.Cap(br, name, lim.MaxFileBytes, total), nil
}

// Open opens the regular file at p for reading. A named pipe, socket or
// device is refused before it is opened (opening a pipe blocks until a
// writer comes, and reading a device may never end).
func Open(p string) (*os.File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if err := regular(p, st); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err != nil || regular(p, st) != nil {
		f.Close()
		if err == nil {
			err = regular(p, st)
		}
		return nil, err
	}
	return f, nil
}

func regular(p string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch m := st.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s: want a regular file", p, kind)
}

// WithRaw opens the regular file at p and hands it, as stored, to fn
// (for the Read functions, which decompress themselves).
func WithRaw(p string, fn func(r io.Reader) error) error {
	f, err := Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// WithFile opens the regular file at p (raw or gzip) and hands its
// content, through Plain's budgets, to fn.
func WithFile(p string, lim Limits, fn func(r io.Reader) error) error {
	f, err := Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := Plain(f, p, lim)
	if err != nil {
		return err
	}
	return fn(r)
}

// EachLine calls fn with every line of r (1-based numbers, without the line
// ending). A line longer than lim.MaxLineBytes, more than lim.MaxRecords
// lines, and a NUL byte (binary data, such as a gzip file's content read
// as text) are errors naming name and the line.
func EachLine(r io.Reader, name string, lim Limits, fn func(n int, line string) error) error {
	lim = lim.Resolve()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, lim.MaxLineBytes)), lim.MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if int64(n) > lim.MaxRecords {
			return fmt.Errorf("%s: more than %d lines: %w", name, lim.MaxRecords, ErrTooBig)
		}
		b := sc.Bytes()
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return fmt.Errorf("%s: line %d byte %d is NUL: binary data, want text", name, n, i+1)
		}
		if err := fn(n, strings.TrimSuffix(string(b), "\r")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s: line %d longer than %d bytes: %w", name, n+1, lim.MaxLineBytes, ErrTooBig)
		}
		return fmt.Errorf("%s: after line %d: %w", name, n, err)
	}
	return nil
}

func isTar(p string) bool {
	return strings.HasSuffix(p, ".tar") || strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz")
}

// WalkFunc receives one file of a tree: its slash-separated name, its
// size as stored in the tree (a zip member's uncompressed size, a tar
// member's or a file's size), which a reader compares with what the
// content declares (an image's pixels), and its content.
type WalkFunc func(name string, size int64, r io.Reader) error

// WalkTree calls fn for every regular file of src, which is a directory, a
// tar archive (.tar, .tar.gz, .tgz) or a zip file, with its slash-separated
// path relative to src (or as stored in the archive, without a leading
// "./"). A directory is walked in lexical order, an archive in stored
// order. keep filters the paths worth opening.
//
// Budgets: each file or member is refused from its header when it is
// larger than lim.MaxFileBytes, or (zip) when it declares more than
// lim.MaxRatio times its compressed size; its content is capped at
// lim.MaxFileBytes as it is read; the bytes of all kept members draw on
// lim.MaxTotalBytes and their count on lim.MaxRecords; a compressed tar is
// stopped past lim.MaxRatio. An archive member whose name is absolute or
// climbs out of the archive ("../x") is an error naming it.
func WalkTree(src string, lim Limits, keep func(name string) bool, fn WalkFunc) error {
	lim = lim.Resolve()
	w := &walker{src: src, lim: lim, keep: keep, fn: fn,
		bytes: readlimit.Budget{Name: "bytes in its kept files", Limit: lim.MaxTotalBytes},
		files: readlimit.Budget{Name: "kept files", Limit: lim.MaxRecords}}
	switch {
	case isTar(src):
		tl := lim
		tl.MaxFileBytes = lim.MaxTotalBytes + 1<<20 // the members' own budgets apply within
		return WithFile(src, tl, w.tar)
	case strings.HasSuffix(src, ".zip"):
		return w.zip()
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: want a folder, a .tar, .tar.gz, .tgz or .zip archive", src)
	}
	fsys := os.DirFS(src)
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		if d.IsDir() || !keep(name) {
			return nil
		}
		p := filepath.Join(src, filepath.FromSlash(name))
		f, err := Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		r, err := w.member(p, st.Size(), -1, f)
		if err != nil {
			return err
		}
		return fn(name, st.Size(), r)
	})
}

type walker struct {
	src   string
	lim   Limits
	keep  func(string) bool
	fn    WalkFunc
	bytes readlimit.Budget
	files readlimit.Budget
}

// member checks one kept member from its header, before any of it is
// read (size: its declared bytes; stored: its compressed size, -1 when
// not compressed), and returns its content r through the budgets.
func (w *walker) member(name string, size, stored int64, r io.Reader) (io.Reader, error) {
	if err := w.check(name, size, stored); err != nil {
		return nil, err
	}
	return w.wrap(name, stored, r), nil
}

func (w *walker) check(name string, size, stored int64) error {
	if err := w.files.Take(1, w.src); err != nil {
		return err
	}
	if size > w.lim.MaxFileBytes {
		return fmt.Errorf("%s: declares %d bytes, more than %d: %w", name, size, w.lim.MaxFileBytes, ErrTooBig)
	}
	if stored >= 0 {
		if err := readlimit.CheckRatio(name, size, stored, w.lim.MaxRatio); err != nil {
			return err
		}
	}
	if w.bytes.Used()+size > w.bytes.Limit {
		return fmt.Errorf("%s: %d more bytes pass the %d of the whole tree: %w", name, size, w.bytes.Limit, ErrTooBig)
	}
	return nil
}

// wrap caps a checked member's content: a declared size may lie, so the
// stream is checked as it arrives too.
func (w *walker) wrap(name string, stored int64, r io.Reader) io.Reader {
	if stored >= 0 {
		r = readlimit.Ratio(r, func() int64 { return stored }, name, w.lim.MaxRatio)
	}
	return readlimit.Cap(r, name, w.lim.MaxFileBytes, &w.bytes)
}

// memberName cleans an archive member's name and refuses one that
// leaves the archive.
func memberName(src, raw string) (string, error) {
	name := strings.TrimPrefix(path.Clean(raw), "./")
	if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(raw, "\\") {
		return "", fmt.Errorf("%s: member %q leaves the archive: want a relative path without ..", src, raw)
	}
	return name, nil
}

// tar walks a tar stream (already decompressed).
func (w *walker) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("%s: tar: %w", w.src, err)
		}
		name, err := memberName(w.src, h.Name)
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || !w.keep(name) {
			continue
		}
		full := w.src + ":" + name
		mr, err := w.member(full, h.Size, -1, tr)
		if err != nil {
			return err
		}
		if err := w.fn(name, h.Size, mr); err != nil {
			return err
		}
	}
}

// zip walks a zip file.
func (w *walker) zip() error {
	f, err := Open(w.src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("%s: zip: %w", w.src, err)
	}
	for _, zf := range zr.File {
		name, err := memberName(w.src, zf.Name)
		if err != nil {
			return err
		}
		if !zf.Mode().IsRegular() || !w.keep(name) {
			continue
		}
		full := w.src + ":" + name
		size := int64(min(zf.UncompressedSize64, 1<<62))
		stored := int64(min(zf.CompressedSize64, 1<<62))
		if zf.Method == zip.Store {
			stored = -1
		}
		if err := w.zipMember(zf, full, name, size, stored); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) zipMember(zf *zip.File, full, name string, size, stored int64) error {
	if err := w.check(full, size, stored); err != nil {
		return err
	}
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("%s: zip: %w", full, err)
	}
	defer rc.Close()
	return w.fn(name, size, w.wrap(full, stored, rc))
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

// IsDir reports whether p is a folder.
func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// IsFile reports whether p is a regular file.
func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
