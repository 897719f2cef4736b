// Package checkpoint saves and restores parameters and optimizer state in
// the safetensors format, which PyTorch, JAX and TensorFlow users can read
// with Hugging Face's safetensors library.
//
// A checkpoint holds each parameter under its Param.Name and, when an
// optimizer is given, each of its State tensors under "optimizer/" + name.
// Save writes atomically: a crash leaves either the old file or the new
// one. Load validates the whole file, and its match with the parameters,
// before it writes into any of them.
package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// directory, syncs it to disk and renames it over path, so a crash never
// leaves a half-written checkpoint under path. Names must be unique.
func Save(path string, params []*graph.Param, opt optim.Optimizer) (err error) {
	entries, err := collect(params, opt)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
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
	if err := encode(f, entries); err != nil {
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
	syncDir(dir)
	return nil
}

// CheckPath reports, without touching path, whether Save could write it:
// path must name no directory, and its directory must exist and accept a
// new file (tested by creating and removing an empty temporary file, as
// Save does). A program calls it before a long training run so that a
// mistyped path is reported at once rather than after the run.
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
	f, err := os.CreateTemp(dir, "."+base+".check*")
	if err != nil {
		return fmt.Errorf("checkpoint: cannot write in the directory of %s: %w", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// syncDir makes a rename in dir durable. It is best effort: the rename is
// atomic without it, and some systems (Windows) cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Load reads the checkpoint at path into params and, if opt is not nil,
// into the optimizer's state, in place: the existing tensors keep their
// storage and receive the saved elements. Every parameter (and state
// tensor) must be in the file with its dtype and shape, and the file may
// hold no tensor that none of them takes; each mismatch is reported,
// naming the tensor. With opt nil, optimizer state in the file is ignored,
// so a training checkpoint loads for inference. A corrupt or truncated
// file is an error. On any error nothing is written.
func Load(path string, params []*graph.Param, opt optim.Optimizer) error {
	file, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := load(file, params, opt); err != nil {
		return fmt.Errorf("checkpoint: load %s: %w", path, err)
	}
	return nil
}

func load(file []byte, params []*graph.Param, opt optim.Optimizer) error {
	entries, err := collect(params, opt)
	if err != nil {
		return err
	}
	h, err := parse(file)
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
	for _, e := range entries {
		h.decodeInto(e.t, h.tensors[e.name])
	}
	return nil
}

// Read returns every tensor in the safetensors file at path, by name, and
// its "__metadata__" (nil when it has none). It reads files from any
// writer whose dtypes are F32, F64, I32 or I64.
func Read(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	h, err := parse(file)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	out := make(map[string]*tensor.Tensor, len(h.tensors))
	for name, in := range h.tensors {
		t, err := tensor.New(in.dtype, in.shape...)
		if err != nil { // parse has checked the dims
			return nil, nil, fmt.Errorf("checkpoint: read %s: tensor %q: %w", path, name, err)
		}
		h.decodeInto(t, in)
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
