package checkpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/plumbml/plumb/tensor"
)

// The safetensors format (https://github.com/huggingface/safetensors):
//
//	8 bytes   N, the header length, little-endian uint64
//	N bytes   a JSON object: for each tensor name
//	          {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//	          and optionally "__metadata__": {string: string}; it may be
//	          padded with trailing spaces
//	the rest  the data: each tensor's elements, row-major, little-endian,
//	          at [begin, end) relative to the start of the data
//
// Plumb's files also hold, in the metadata, a CRC-32C of each tensor's
// data bytes (see checksumPrefix).
//
// The tensors must cover the data exactly, without overlaps or holes, as
// the reference implementation requires (a hole could hide another file).

const metadataKey = "__metadata__"

// entry is one named tensor to write or fill.
type entry struct {
	name string
	t    *tensor.Tensor
}

// info is one tensor's header record, validated against the data.
type info struct {
	dtype      tensor.DType
	shape      tensor.Shape
	begin, end int
}

// header is a parsed and validated file header.
type header struct {
	tensors map[string]info
	meta    map[string]string
	dataAt  int64 // where the data section starts in the file: 8 + the header length
	dataLen int   // the data section's length: the rest of the file
}

// maxHeader bounds the JSON header: 100 MB, the reference
// implementation's limit, so a header length read from a hostile file
// cannot ask for more.
const maxHeader = 100_000_000

// checksumPrefix begins the "__metadata__" key under which Save stores the
// CRC-32C (Castagnoli) of each tensor's data bytes, as 8 hex digits:
// "crc32c:" + the tensor's name. Other safetensors readers ignore the
// metadata; Load and Read verify every checksum they find.
const checksumPrefix = "crc32c:"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var dtypeNames = map[tensor.DType]string{
	tensor.Float32: "F32",
	tensor.Float64: "F64",
	tensor.Int32:   "I32",
	tensor.Int64:   "I64",
}

func dtypeOf(name string) (tensor.DType, bool) {
	for dt, n := range dtypeNames {
		if n == name {
			return dt, true
		}
	}
	return 0, false
}

type jsonInfo struct {
	DType       string `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets []int  `json:"data_offsets"`
}

// encode writes entries to w in order, with extra and the CRC-32C of each
// tensor's data bytes in the metadata. The header is padded with spaces so that the
// data starts 8-byte aligned, as the reference writer does.
func encode(w io.Writer, entries []entry, extra map[string]string) error {
	hdr := make(map[string]any, len(entries)+1)
	meta := make(map[string]string, len(entries)+len(extra))
	maps.Copy(meta, extra)
	off := 0
	var buf []byte
	for _, e := range entries {
		n := e.t.Size() * e.t.DType().Size()
		shape := append([]int{}, e.t.Shape()...)
		hdr[e.name] = jsonInfo{DType: dtypeNames[e.t.DType()], Shape: shape, DataOffsets: []int{off, off + n}}
		off += n
		buf = appendData(buf[:0], e.t)
		meta[checksumPrefix+e.name] = fmt.Sprintf("%08x", crc32.Checksum(buf, castagnoli))
	}
	hdr[metadataKey] = meta
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	if pad := (8 - len(js)%8) % 8; pad > 0 {
		js = append(js, bytes.Repeat([]byte{' '}, pad)...)
	}
	bw := bufio.NewWriter(w)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(js)))
	bw.Write(n[:])
	bw.Write(js)
	for _, e := range entries {
		buf = appendData(buf[:0], e.t)
		bw.Write(buf)
	}
	return bw.Flush() // a bufio.Writer keeps its first error
}

func appendData(b []byte, t *tensor.Tensor) []byte {
	le := binary.LittleEndian
	switch d := t.Raw().(type) {
	case []float32:
		for _, v := range d {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	case []int32:
		for _, v := range d {
			b = le.AppendUint32(b, uint32(v))
		}
	case []int64:
		for _, v := range d {
			b = le.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// parse validates a whole file held in memory; see readHeader.
func parse(file []byte) (*header, error) {
	return readHeader(bytes.NewReader(file), int64(len(file)))
}

// readHeader reads and validates the header of a file of size bytes: the
// header length against the file size and maxHeader, the JSON (no
// duplicate names, known dtypes, non-negative dims), each tensor's offsets
// against the data section and its shape and dtype, and that the tensors
// tile the data exactly. It reads only the header, so a huge file costs
// no more memory than its header, and it never panics on any input.
func readHeader(r io.ReaderAt, size int64) (*header, error) {
	if size < 8 {
		return nil, fmt.Errorf("file of %d bytes is too short for the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		return nil, fmt.Errorf("header length %d exceeds the %d bytes after it", n, size-8)
	}
	if n > maxHeader {
		return nil, fmt.Errorf("header length %d exceeds the limit of %d bytes", n, maxHeader)
	}
	if uint64(size-8)-n > math.MaxInt {
		return nil, fmt.Errorf("data section of %d bytes is too large", uint64(size-8)-n)
	}
	js := make([]byte, n) // n <= size-8: the bytes are there
	if _, err := r.ReadAt(js, 8); err != nil {
		return nil, fmt.Errorf("reading the %d-byte header: %w", n, err)
	}
	h := &header{tensors: map[string]info{}, dataAt: 8 + int64(n), dataLen: int(uint64(size-8) - n)}
	if err := h.parseJSON(js); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return h, h.checkTiling()
}

// read returns the data bytes of the record in (validated against the
// file's size, so the allocation is what the file holds), checked against
// its checksum in the metadata when there is one.
func (h *header) read(r io.ReaderAt, name string, in info) ([]byte, error) {
	b := make([]byte, in.end-in.begin)
	if _, err := r.ReadAt(b, h.dataAt+int64(in.begin)); err != nil {
		return nil, fmt.Errorf("tensor %q: reading %d bytes: %w", name, len(b), err)
	}
	want, ok := h.meta[checksumPrefix+name]
	if !ok {
		return b, nil
	}
	sum, err := strconv.ParseUint(want, 16, 32)
	if err != nil || len(want) != 8 {
		return nil, fmt.Errorf("tensor %q: checksum %q in the metadata is not 8 hex digits", name, want)
	}
	if got := crc32.Checksum(b, castagnoli); got != uint32(sum) {
		return nil, fmt.Errorf("tensor %q: its data has CRC-32C %08x but the file recorded %08x: the file is corrupt", name, got, sum)
	}
	return b, nil
}

func (h *header) parseJSON(js []byte) error {
	if len(js) == 0 || js[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if _, err := dec.Token(); err != nil { // the '{' checked above
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string) // object keys are always strings
		if _, dup := h.tensors[name]; dup || (name == metadataKey && h.meta != nil) {
			return fmt.Errorf("name %q appears twice", name)
		}
		if name == metadataKey {
			if err := dec.Decode(&h.meta); err != nil {
				return fmt.Errorf("%s: %w", metadataKey, err)
			}
			if h.meta == nil {
				h.meta = map[string]string{}
			}
			continue
		}
		var ji jsonInfo
		if err := dec.Decode(&ji); err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
		in, err := h.check(ji)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
		h.tensors[name] = in
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// check validates one record against the data section.
func (h *header) check(ji jsonInfo) (info, error) {
	dt, ok := dtypeOf(ji.DType)
	if !ok {
		return info{}, fmt.Errorf("unsupported dtype %q (want F32, F64, I32 or I64)", ji.DType)
	}
	if ji.Shape == nil {
		return info{}, errors.New("no shape")
	}
	for _, d := range ji.Shape {
		if d < 0 {
			return info{}, fmt.Errorf("negative dim in shape %v", ji.Shape)
		}
	}
	size := 0
	if !slices.Contains(ji.Shape, 0) {
		size = dt.Size()
		for _, d := range ji.Shape {
			if size > h.dataLen/d { // also keeps size*d from overflowing
				return info{}, fmt.Errorf("%s%v needs more than the %d bytes of data", ji.DType, ji.Shape, h.dataLen)
			}
			size *= d
		}
	}
	if len(ji.DataOffsets) != 2 {
		return info{}, fmt.Errorf("data_offsets %v, want [begin, end]", ji.DataOffsets)
	}
	begin, end := ji.DataOffsets[0], ji.DataOffsets[1]
	if begin < 0 || end < begin || end > h.dataLen {
		return info{}, fmt.Errorf("data_offsets %v outside the %d bytes of data", ji.DataOffsets, h.dataLen)
	}
	if end-begin != size {
		return info{}, fmt.Errorf("data_offsets %v hold %d bytes, but %s%v needs %d", ji.DataOffsets, end-begin, ji.DType, ji.Shape, size)
	}
	return info{dtype: dt, shape: tensor.Shape(ji.Shape), begin: begin, end: end}, nil
}

// checkTiling checks that the tensors cover the data without overlaps or
// holes.
func (h *header) checkTiling() error {
	names := make([]string, 0, len(h.tensors))
	for name := range h.tensors {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		x, y := h.tensors[a], h.tensors[b]
		return cmp.Or(cmp.Compare(x.begin, y.begin), cmp.Compare(x.end, y.end), cmp.Compare(a, b))
	})
	off := 0
	for _, name := range names {
		in := h.tensors[name]
		switch {
		case in.begin < off:
			return fmt.Errorf("tensor %q at [%d, %d) overlaps the tensor before it", name, in.begin, in.end)
		case in.begin > off:
			return fmt.Errorf("bytes [%d, %d) of data belong to no tensor", off, in.begin)
		}
		off = in.end
	}
	if off != h.dataLen {
		return fmt.Errorf("bytes [%d, %d) of data belong to no tensor", off, h.dataLen)
	}
	return nil
}

// decodeInto copies a record's data bytes b into dst, whose dtype and
// size match it.
func decodeInto(dst *tensor.Tensor, b []byte) {
	le := binary.LittleEndian
	switch d := dst.Raw().(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(le.Uint32(b[4*i:]))
		}
	case []int64:
		for i := range d {
			d[i] = int64(le.Uint64(b[8*i:]))
		}
	}
}
