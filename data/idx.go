package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// IDX is a decoded IDX file of unsigned bytes: Data holds the elements in
// row-major order over Dims.
type IDX struct {
	Dims []int
	Data []byte
}

// idxUbyte is the IDX type code for unsigned bytes, the only one MNIST uses.
const idxUbyte = 0x08

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// ReadIDX decodes an IDX file of unsigned bytes, raw or gzip-compressed
// (told apart by the gzip magic bytes). The format is a 4-byte magic
// (0, 0, type code, rank), rank big-endian uint32 dims, then the elements.
// It checks the magic, the type code (only 0x08, unsigned byte, is
// supported), a rank of at least 1, that the dims' product fits an int,
// and that the data holds exactly that many bytes: a truncated file and
// trailing bytes are both errors. Memory grows with the bytes actually
// read, so a header that claims huge dims cannot force a huge allocation.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("idx: gzip: %w", err)
		}
		defer zr.Close()
		return readIDX(zr)
	}
	return readIDX(br)
}

func readIDX(r io.Reader) (*IDX, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("idx: reading magic: %w", truncated(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("idx: bad magic % x: want 00 00 <type> <rank>", magic)
	}
	if magic[2] != idxUbyte {
		return nil, fmt.Errorf("idx: type code 0x%02x not supported: want 0x%02x (unsigned byte)", magic[2], idxUbyte)
	}
	rank := int(magic[3])
	if rank == 0 {
		return nil, fmt.Errorf("idx: rank 0: want at least one dim")
	}
	raw := make([]byte, 4*rank)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("idx: reading %d dims: %w", rank, truncated(err))
	}
	dims := make([]int, rank)
	n := uint64(1) // element count, kept <= math.MaxInt
	for i := range dims {
		d := uint64(binary.BigEndian.Uint32(raw[4*i:]))
		if d > math.MaxInt || (d != 0 && n > math.MaxInt/d) {
			return nil, fmt.Errorf("idx: dims %v then %d: more elements than an int can count", dims[:i], d)
		}
		dims[i] = int(d)
		n *= d
	}
	var buf bytes.Buffer
	buf.Grow(int(min(n, 1<<16)))
	got, err := io.CopyN(&buf, r, int64(n))
	if err != nil {
		return nil, fmt.Errorf("idx: dims %v want %d bytes of data, got %d: %w", dims, n, got, truncated(err))
	}
	var extra [1]byte
	switch k, err := r.Read(extra[:]); {
	case k > 0:
		return nil, fmt.Errorf("idx: dims %v want %d bytes of data, but more follow", dims, n)
	case err != nil && err != io.EOF:
		return nil, fmt.Errorf("idx: after %d bytes of data: %w", n, err)
	}
	return &IDX{Dims: dims, Data: buf.Bytes()}, nil
}

// truncated names an early end of input for what it is.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated file: %w", io.ErrUnexpectedEOF)
	}
	return err
}
