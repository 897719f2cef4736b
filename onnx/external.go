package onnx

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/onnx/internal/pb"
)

// readExternal reads the want bytes of a tensor whose data_location is
// EXTERNAL, following the ONNX external-data convention
// (docs/ExternalData.md in the onnx repository): external_data holds
// "location" (a path relative to the model's directory), "offset" and
// "length" (decimal byte counts; offset defaults to 0, length to the rest
// of the file) and an optional "checksum", not verified here. The location
// must stay inside Options.Dir: absolute paths and ".." escapes are
// refused, and the file is opened through os.Root so that a symbolic link
// cannot lead out either; it must be a regular file, and offset+length
// must lie within it before anything is read.
func (c *converter) readExternal(t *pb.TensorProto, want int64, where string) ([]byte, error) {
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range t.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
			if err == nil && offset < 0 {
				err = fmt.Errorf("negative")
			}
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
			if err == nil && length < 0 {
				err = fmt.Errorf("negative")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("onnx: %s: external data %s %q: %v; expected a byte count of at least 0", where, kv.GetKey(), kv.GetValue(), err)
		}
	}
	if loc == "" {
		return nil, fmt.Errorf("onnx: %s: external data has no location; expected a file name relative to the model", where)
	}
	if c.opts.Dir == "" {
		return nil, fmt.Errorf("onnx: %s: data is in external file %q but no directory is known; use Load, or set Options.Dir", where, loc)
	}
	rel := filepath.Clean(filepath.FromSlash(loc))
	if filepath.IsAbs(loc) || filepath.IsAbs(rel) || strings.HasPrefix(loc, "/") || filepath.VolumeName(rel) != "" ||
		rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("onnx: %s: external data location %q leaves the model's directory; expected a relative path inside it", where, loc)
	}
	root, err := os.OpenRoot(c.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", where, err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: external data: %w", where, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: external data: %w", where, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("onnx: %s: external data location %q is not a regular file (mode %v)", where, loc, st.Mode())
	}
	size := st.Size()
	if offset > size {
		return nil, fmt.Errorf("onnx: %s: external data offset %d is past the end of %q (%d bytes)", where, offset, loc, size)
	}
	if length < 0 {
		length = size - offset
	}
	if length > size-offset {
		return nil, fmt.Errorf("onnx: %s: external data declares %d bytes at offset %d but %q holds %d bytes", where, length, offset, loc, size)
	}
	if length != want {
		return nil, fmt.Errorf("onnx: %s declares dims %v (%d bytes) but its external data length is %d bytes", where, t.GetDims(), want, length)
	}
	if c.external+length > c.opts.MaxExternalBytes {
		return nil, fmt.Errorf("onnx: %s: external data would bring the model's total to %d bytes, over the limit of %d bytes (raise Options.MaxExternalBytes)", where, c.external+length, c.opts.MaxExternalBytes)
	}
	c.external += length
	buf := make([]byte, length) // justified: length lies within a regular file checked above
	if _, err := io.ReadFull(io.NewSectionReader(f, offset, length), buf); err != nil {
		return nil, fmt.Errorf("onnx: %s: reading %d bytes at offset %d of %q: %w", where, length, offset, loc, err)
	}
	return buf, nil
}
