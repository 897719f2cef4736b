package mnist

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/internal/readlimit"
)

// IDX is a decoded IDX file of unsigned bytes: Data holds the elements in
// row-major order over Dims.
type IDX struct {
	Dims []int
	Data []byte
}

// idxUbyte is the IDX type code for unsigned bytes, the only one MNIST uses.
const idxUbyte = 0x08

// MaxIDXBytes is the largest data section ReadIDX accepts: 1 GiB, twice
// EMNIST ByClass's training images (547 MB), the largest IDX file in
// common use. ReadIDXMax takes another bound.
const MaxIDXBytes = 1 << 30

// Gzip input may expand at most readlimit.Default().MaxRatio (100) times
// its compressed size, after readlimit.RatioSlack bytes, as every corpus
// reader's gzip input may. Real IDX files expand 2 to 6 times (MNIST's
// images 4.9, its labels 2.1); deflate reaches about 1000 times on long
// runs of one byte, which is what a decompression bomb is made of.

// ReadIDX decodes an IDX file of unsigned bytes, raw or gzip-compressed
// (told apart by the gzip magic bytes), of at most MaxIDXBytes of data.
// See ReadIDXMax.
func ReadIDX(r io.Reader) (*IDX, error) { return ReadIDXMax(r, MaxIDXBytes) }

// ReadIDXMax decodes an IDX file of unsigned bytes, raw or gzip-compressed,
// whose data section holds at most maxBytes. The format is a 4-byte magic
// (0, 0, type code, rank), rank big-endian uint32 dims, then the elements.
// It checks the magic, the type code (only 0x08, unsigned byte, is
// supported), a rank of at least 1, that the dims' product fits an int and
// maxBytes, and that the data holds exactly that many bytes: a truncated
// file and trailing bytes are both errors.
//
// Memory follows the input, not the header: the data buffer grows with
// the bytes that actually arrive (internal/readlimit), and a gzip stream
// that expands more than 100 times (plus 1 MiB) is stopped as a
// decompression bomb, so a small file that claims a huge array cannot
// make a huge allocation.
func ReadIDXMax(r io.Reader, maxBytes int64) (*IDX, error) {
	return readIDXChecked(r, func(dims []int, n uint64) error {
		if n > uint64(max(maxBytes, 0)) {
			return fmt.Errorf("idx: dims %v hold %d bytes, more than the limit of %d", dims, n, maxBytes)
		}
		return nil
	})
}

// readIDXChecked decodes an IDX file after check has accepted its dims
// and data size, which it sees before any data is read.
func readIDXChecked(r io.Reader, check func(dims []int, n uint64) error) (*IDX, error) {
	if r == nil {
		return nil, errors.New("idx: nil reader")
	}
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && bytes.Equal(head, fileio.GzipMagic) {
		in := &readlimit.Counter{R: br}
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("idx: gzip: %w", err)
		}
		defer zr.Close()
		return readIDX(readlimit.Ratio(zr, func() int64 { return in.N }, "idx: gzip", readlimit.Default().MaxRatio), check)
	}
	return readIDX(br, check)
}

func readIDX(r io.Reader, check func(dims []int, n uint64) error) (*IDX, error) {
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
	var raw [4 * 255]byte
	if _, err := io.ReadFull(r, raw[:4*rank]); err != nil {
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
	if err := check(dims, n); err != nil {
		return nil, err
	}
	data, err := readlimit.Full(r, int64(n))
	if err != nil {
		return nil, fmt.Errorf("idx: dims %v want %d bytes of data, got %d: %w", dims, n, len(data), truncated(err))
	}
	var extra [1]byte
	switch k, err := r.Read(extra[:]); {
	case k > 0:
		return nil, fmt.Errorf("idx: dims %v want %d bytes of data, but more follow", dims, n)
	case err != nil && err != io.EOF:
		return nil, fmt.Errorf("idx: after %d bytes of data: %w", n, err)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// truncated names an early end of input for what it is.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated file: %w", io.ErrUnexpectedEOF)
	}
	return err
}
