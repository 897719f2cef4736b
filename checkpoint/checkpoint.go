// Package checkpoint saves and restores parameters and optimizer state in
// the safetensors format, which PyTorch, JAX and TensorFlow users can read
// with Hugging Face's safetensors library.
//
// A checkpoint holds each parameter under its Param.Name and, when an
// optimizer is given, each of its State tensors under "optimizer/" + name.
// Save writes atomically: a crash leaves either the old file or the new
// one. Load validates the whole file, and its match with the parameters,
// before it writes into any of them, and reads no more of the file than
// the tensors it fills. Each tensor's CRC-32C, stored in the metadata
// where other safetensors readers ignore it, catches bits flipped on disk
// or in transit.
package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// OptimizerPrefix begins the names of an optimizer's state tensors in a
// checkpoint, keeping them apart from the parameters' names.
const OptimizerPrefix = "optimizer/"

// Save writes the values of params (trainable or not) and, if opt is not
// nil, the optimizer's state to path. It writes a temporary file in path's
// directory, syncs it to disk, renames it over path and syncs the
// directory, so a crash never leaves a half-written checkpoint under path;
// an error from the directory sync is returned (the new file is in place,
// but may not survive a power loss). Temporary files of earlier saves to
// the same path that a crash left behind (.<name>.tmp<digits>, in path's
// directory, and no other name) are removed before the new one is
// created, so that they neither pile up nor hold the space a full disk
// needs; a save that fails removes its own. Two processes must not save
// to one path at once.
// Names must be unique. The metadata holds each tensor's CRC-32C, which
// Load and Read verify.
func Save(path string, params []*graph.Param, opt optim.Optimizer) error {
	return SaveMeta(path, params, opt, nil)
}

// SaveMeta is Save with meta written in the file's "__metadata__" beside
// the checksums: what a program needs to rebuild the model the file holds
// (its name, configuration, vocabularies), which other safetensors readers
// show as the file's metadata. Keys may not begin with the checksums'
// prefix "crc32c:". Meta reads it back.
func SaveMeta(path string, params []*graph.Param, opt optim.Optimizer, meta map[string]string) (err error) {
	if err := checkMeta(meta); err != nil {
		return err
	}
	entries, err := collect(params, opt)
	if err != nil {
		return err
	}
	for i, e := range entries { // a checkpoint holds host copies of tensors on a device
		if e.t.Device() != nil {
			if entries[i].t, err = e.t.To(nil); err != nil {
				return fmt.Errorf("checkpoint: tensor %q: %w", e.name, err)
			}
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("checkpoint: save %s: %w", path, err)
		}
	}()
	if err := encode(tempWriter(f), entries, meta); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("checkpoint: save %s: the file is in place, but syncing its directory failed: %w", path, err)
	}
	return nil
}

// tempPrefix begins the names of Save's temporary files for a target
// named base; os.CreateTemp appends digits.
func tempPrefix(base string) string { return "." + base + ".tmp" }

// removeStale removes the temporary files that saves to base in dir left
// behind when they were killed before their rename. It is best effort: a
// file it cannot remove stays, as before.
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// tempWriter is what Save encodes into: the temporary file itself. It is
// a variable so that a test can make the writes fail as on a full disk.
var tempWriter = func(f *os.File) io.Writer { return f }

// syncDir makes a rename in dir durable. Windows cannot sync a directory
// (and its renames are durable without it), so there it does nothing. It
// is a variable so that a test can make it fail.
var syncDir = func(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// CheckPath reports, without touching path, whether Save could write it:
// path must name no directory, and its directory must exist and accept a
// new file (tested by creating and removing an empty temporary file, named
// as Save names its own). A program calls it before a long training run
// so that a mistyped path is reported at once rather than after the run.
func CheckPath(path string) error {
	if path == "" {
		return errors.New("checkpoint: empty path")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("checkpoint: %s is a directory, want a file name", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("checkpoint: %s names a directory, want a file name", path)
	}
	f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("checkpoint: cannot write in the directory of %s: %w", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Load reads the checkpoint at path into params and, if opt is not nil,
// into the optimizer's state, in place: the existing tensors keep their
// storage and receive the saved elements. Every parameter (and state
// tensor) must be in the file with its dtype and shape, and the file may
// hold no tensor that none of them takes; each mismatch is reported,
// naming the tensor. With opt nil, optimizer state in the file is ignored,
// so a training checkpoint loads for inference. A corrupt or truncated
// file is an error, and so is a tensor whose bytes do not match the
// checksum in the metadata (files without checksums load unverified). On
// any error nothing is written.
//
// Load validates the header against the file's size and matches it with
// the parameters before it reads any tensor, so a huge or hostile file
// costs no more memory than the tensors it is loaded into.
func Load(path string, params []*graph.Param, opt optim.Optimizer) error {
	f, size, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := load(f, size, params, opt); err != nil {
		return fmt.Errorf("checkpoint: load %s: %w", path, err)
	}
	return nil
}

// open opens a file to read and returns its size.
func open(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("checkpoint: %s is not a regular file", path)
	}
	return f, st.Size(), nil
}

func load(r io.ReaderAt, size int64, params []*graph.Param, opt optim.Optimizer) error {
	entries, err := collect(params, opt)
	if err != nil {
		return err
	}
	h, err := readHeader(r, size)
	if err != nil {
		return err
	}
	var errs []error
	want := make(map[string]bool, len(entries))
	for _, e := range entries {
		want[e.name] = true
		in, ok := h.tensors[e.name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q is missing", e.name))
		case in.dtype != e.t.DType() || !in.shape.Equal(e.t.Shape()):
			errs = append(errs, fmt.Errorf("tensor %q is %v%v in the file, want %v%v", e.name, in.dtype, in.shape, e.t.DType(), e.t.Shape()))
		}
	}
	var extra []string
	for name := range h.tensors {
		if !want[name] && (opt != nil || !strings.HasPrefix(name, OptimizerPrefix)) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		errs = append(errs, fmt.Errorf("tensor %q in the file belongs to no parameter", name))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	data := make([][]byte, len(entries)) // read and verified before anything is written
	for i, e := range entries {
		if data[i], err = h.read(r, e.name, h.tensors[e.name]); err != nil {
			return err
		}
	}
	for i, e := range entries {
		if e.t.Device() == nil {
			decodeInto(e.t, data[i])
			continue
		}
		h := tensor.Empty(e.t.DType(), e.t.Shape()...) // a tensor on a device loads through a host copy
		decodeInto(h, data[i])
		if err := e.t.CopyFrom(h); err != nil {
			return fmt.Errorf("tensor %q: %w", e.name, err)
		}
	}
	return nil
}

// Read returns every tensor in the safetensors file at path, by name, and
// its "__metadata__" (nil when it has none; a Plumb file's holds the
// checksums). It reads files from any writer whose dtypes are F32, F64,
// I32 or I64, and verifies the checksums it finds. It validates the
// header against the file's size before it reads any tensor.
func Read(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	f, size, err := open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h, err := readHeader(f, size)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	out := make(map[string]*tensor.Tensor, len(h.tensors))
	for name, in := range h.tensors {
		b, err := h.read(f, name, in)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
		}
		t, err := tensor.New(in.dtype, in.shape...)
		if err != nil { // readHeader has checked the dims
			return nil, nil, fmt.Errorf("checkpoint: read %s: tensor %q: %w", path, name, err)
		}
		decodeInto(t, b)
		out[name] = t
	}
	return out, h.meta, nil
}

// collect lists the tensors of params and opt's state under their
// checkpoint names, checking that every one has a value and a unique name.
func collect(params []*graph.Param, opt optim.Optimizer) ([]entry, error) {
	var entries []entry
	seen := map[string]bool{}
	add := func(name string, p *graph.Param) error {
		switch {
		case p.Value == nil:
			return fmt.Errorf("checkpoint: tensor %q has no value", name)
		case name == metadataKey:
			return fmt.Errorf("checkpoint: the name %q is reserved by safetensors", name)
		case seen[name]:
			return fmt.Errorf("checkpoint: two tensors are named %q", name)
		}
		seen[name] = true
		entries = append(entries, entry{name, p.Value})
		return nil
	}
	for i, p := range params {
		if p == nil {
			return nil, fmt.Errorf("checkpoint: parameter %d is nil", i)
		}
		if err := add(p.Name, p); err != nil {
			return nil, err
		}
	}
	if opt == nil {
		return entries, nil
	}
	for i, p := range opt.State() {
		if p == nil {
			return nil, fmt.Errorf("checkpoint: optimizer state %d is nil", i)
		}
		if err := add(OptimizerPrefix+p.Name, p); err != nil {
			return nil, err
		}
	}
	return entries, nil
}
