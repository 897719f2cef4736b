package parity

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/internal/readlimit"
	"github.com/plumbml/plumb/tensor"
)

// ReadNpy reads one NumPy .npy array (format version 1, 2 or 3) of
// little-endian float32, float64, int32 or int64 elements in C order.
//
// We read .npy ourselves instead of through gorgonia.org/tensor's
// Dense.ReadNpy because the goldens hold rank-0 arrays (the scalar losses)
// and may hold zero-size ones, which Gorgonia's Dense cannot represent
// (see package tensor/dense), and because a golden in an unexpected encoding
// (Fortran order, big-endian, bool) should fail with an error that names
// it rather than be converted. The format is small: a magic string, a
// version, a header length and a Python dict literal giving descr,
// fortran_order and shape, then the raw elements. Memory follows the
// input: the data is read as it arrives, so a header that claims a huge
// shape over a few bytes of data is an error, not a huge allocation.
func ReadNpy(r io.Reader) (*tensor.Tensor, error) {
	if r == nil {
		return nil, errors.New("npy: ReadNpy: nil reader")
	}
	br := bufio.NewReader(r)
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: reading magic: %w", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: not a .npy file (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var n uint16
		if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", err)
		}
		hlen = int(n)
	case 2, 3:
		var n uint32
		if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", err)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", pre[6], pre[7])
	}
	if hlen > maxNpyHeader {
		return nil, fmt.Errorf("npy: header length %d exceeds the limit of %d", hlen, maxNpyHeader)
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(br, header); err != nil {
		return nil, fmt.Errorf("npy: reading header: %w", err)
	}
	dt, shape, err := parseNpyHeader(string(header))
	if err != nil {
		return nil, err
	}
	n := int64(dt.Size()) // bytes of data, kept <= math.MaxInt
	for _, d := range shape {
		if d != 0 && n > math.MaxInt/int64(d) {
			return nil, fmt.Errorf("npy: shape %v holds more bytes than an int can count", shape)
		}
		n *= int64(d)
	}
	data, err := readlimit.Full(br, n) // grows with the bytes that arrive, not with the shape
	if err != nil {
		return nil, fmt.Errorf("npy: reading %d %v elements of shape %v: %w", n/int64(dt.Size()), dt, shape, err)
	}
	t, err := tensor.New(dt, shape...)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if _, err := binary.Decode(data, binary.LittleEndian, t.Raw()); err != nil {
		return nil, fmt.Errorf("npy: decoding %d %v elements of shape %v: %w", t.Size(), dt, t.Shape(), err)
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("npy: data beyond the %d elements of shape %v", t.Size(), t.Shape())
	}
	return t, nil
}

// maxNpyHeader bounds the header dict: 64 KiB. NumPy writes headers of a
// few hundred bytes and reads at most 10,000 by default (max_header_size);
// without a bound a version-2 header length could ask for 4 GB.
const maxNpyHeader = 64 << 10

// npyDTypes maps the descr strings we accept to dtypes: little-endian only.
var npyDTypes = map[string]tensor.DType{
	"<f4": tensor.Float32, "<f8": tensor.Float64, "<i4": tensor.Int32, "<i8": tensor.Int64,
}

// parseNpyHeader reads the header dict, such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
func parseNpyHeader(h string) (tensor.DType, []int, error) {
	field := func(key string) (string, error) {
		k := "'" + key + "':"
		i := strings.Index(h, k)
		if i < 0 {
			return "", fmt.Errorf("npy: header %q has no %s", h, key)
		}
		return strings.TrimSpace(h[i+len(k):]), nil
	}
	descr, err := field("descr")
	if err != nil {
		return 0, nil, err
	}
	end := strings.IndexByte(descr[min(1, len(descr)):], '\'')
	if !strings.HasPrefix(descr, "'") || end < 0 {
		return 0, nil, fmt.Errorf("npy: bad descr in header %q", h)
	}
	dt, ok := npyDTypes[descr[1:1+end]]
	if !ok {
		return 0, nil, fmt.Errorf("npy: unsupported dtype %s (want <f4, <f8, <i4 or <i8)", descr[1:1+end])
	}
	order, err := field("fortran_order")
	if err != nil {
		return 0, nil, err
	}
	if !strings.HasPrefix(order, "False") {
		return 0, nil, errors.New("npy: Fortran-order arrays are not supported")
	}
	sh, err := field("shape")
	if err != nil {
		return 0, nil, err
	}
	close := strings.IndexByte(sh, ')')
	if !strings.HasPrefix(sh, "(") || close < 0 {
		return 0, nil, fmt.Errorf("npy: bad shape in header %q", h)
	}
	var shape []int
	for _, p := range strings.Split(sh[1:close], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		d, err := strconv.Atoi(p)
		if err != nil || d < 0 {
			return 0, nil, fmt.Errorf("npy: bad dim %q in header %q", p, h)
		}
		shape = append(shape, d)
	}
	return dt, shape, nil
}

// loadNpy reads the .npy file name from fsys.
func loadNpy(fsys fs.FS, name string) (*tensor.Tensor, error) {
	if fsys == nil {
		return nil, fmt.Errorf("%s: no file system to read it from (a case not made by LoadCases)", name)
	}
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	t, err := ReadNpy(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}
