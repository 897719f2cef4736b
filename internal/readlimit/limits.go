package readlimit

import (
	"errors"
	"fmt"
	"io"
)

// ErrTooBig is wrapped by every error that stops an input at one of a
// Limits' budgets (and by data/internal/fileio's, which use these).
var ErrTooBig = errors.New("larger than the reader's limit")

// ErrBomb is wrapped by the error of a compressed stream or image that
// expands more than Limits.MaxRatio times its stored size.
var ErrBomb = errors.New("a decompression bomb")

// RatioSlack is the output that any compressed stream or encoded image
// may produce before Limits.MaxRatio applies: small files may expand a
// lot (a header, a few repeated records) without being hostile.
const RatioSlack = 1 << 20

// Limits are the budgets of Plumb's corpus readers. Each is checked
// before the memory it guards is allocated, so a small hostile file ends
// in an error wrapping ErrTooBig or ErrBomb instead of exhausting memory.
// A zero field means the default of Default; raise a field to read a
// larger honest input.
type Limits struct {
	// MaxRatio bounds how many bytes one stored byte of a compressed
	// stream (gzip, a zip member) or of an encoded image may expand into,
	// after the first RatioSlack bytes. Real corpora expand under 10 times.
	MaxRatio int64
	// MaxFileBytes bounds one file or archive member after decompression.
	MaxFileBytes int64
	// MaxTotalBytes bounds all the bytes one call reads, summed over files
	// and archive members (for images: the decoded float32 pixels).
	MaxTotalBytes int64
	// MaxLineBytes bounds one line of a text format.
	MaxLineBytes int
	// MaxRecords bounds the records one call reads: lines, binary records,
	// archive members, examples.
	MaxRecords int64
	// MaxImagePixels bounds one image's width×height, checked from its
	// header before it is decoded.
	MaxImagePixels int64
}

// Default returns the default budgets: a ratio of 100, 1 GiB a file,
// 4 GiB a call, 1 MiB a line, 1<<24 records (lines, tokens, records or
// members: about 16.8 million, so that their headers stay within a few
// hundred megabytes), 4096×4096 pixels an image. They admit every corpus
// Plumb reads (the largest, the IMDB archive, holds about 0.5 GB and 12
// million words) and refuse a gzip bomb within its first megabytes.
func Default() Limits {
	return Limits{
		MaxRatio:       100,
		MaxFileBytes:   1 << 30,
		MaxTotalBytes:  4 << 30,
		MaxLineBytes:   1 << 20,
		MaxRecords:     1 << 24,
		MaxImagePixels: 4096 * 4096,
	}
}

// Or returns l with every zero or negative field replaced by d's.
func (l Limits) Or(d Limits) Limits {
	pick := func(a, b int64) int64 {
		if a > 0 {
			return a
		}
		return b
	}
	l.MaxRatio = pick(l.MaxRatio, d.MaxRatio)
	l.MaxFileBytes = pick(l.MaxFileBytes, d.MaxFileBytes)
	l.MaxTotalBytes = pick(l.MaxTotalBytes, d.MaxTotalBytes)
	l.MaxLineBytes = int(pick(int64(l.MaxLineBytes), int64(d.MaxLineBytes)))
	l.MaxRecords = pick(l.MaxRecords, d.MaxRecords)
	l.MaxImagePixels = pick(l.MaxImagePixels, d.MaxImagePixels)
	return l
}

// Resolve is l.Or(Default()): the budgets a reader applies.
func (l Limits) Resolve() Limits { return l.Or(Default()) }

// Budget is a running total that one call's reads draw on (bytes over
// several archive members, or records); it fails once more than its
// limit has been taken. The zero Budget refuses everything.
type Budget struct {
	Name  string // what is counted, for the error: "bytes", "records"
	Limit int64
	used  int64
}

// Take draws n from b, and fails, naming where (a file and line, say),
// once the total passes the limit.
func (b *Budget) Take(n int64, where string) error {
	b.used += n
	if b.used > b.Limit {
		return fmt.Errorf("%s: more than %d %s: %w", where, b.Limit, b.Name, ErrTooBig)
	}
	return nil
}

// Used is what has been taken so far.
func (b *Budget) Used() int64 { return b.used }

// Cap returns a reader of r that fails, naming name, once more than
// limit bytes have arrived, and draws each byte from total too when it is
// not nil (the bytes of a whole archive).
func Cap(r io.Reader, name string, limit int64, total *Budget) io.Reader {
	return &capReader{r: r, name: name, limit: limit, total: total}
}

type capReader struct {
	r     io.Reader
	name  string
	limit int64
	n     int64
	total *Budget
}

func (c *capReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.n > c.limit {
		return k, fmt.Errorf("%s: more than %d bytes: %w", c.name, c.limit, ErrTooBig)
	}
	if c.total != nil {
		if terr := c.total.Take(int64(k), c.name); terr != nil {
			return k, terr
		}
	}
	return k, err
}

// Counter counts the bytes read through it: the stored side of a
// compressed stream. It is an io.ByteReader when r is, so that a flate
// reader reads through it without buffering ahead.
type Counter struct {
	R io.Reader
	N int64
}

func (c *Counter) Read(p []byte) (int, error) {
	k, err := c.R.Read(p)
	c.N += int64(k)
	return k, err
}

// ReadByte reads one byte, from R's ReadByte when it has one.
func (c *Counter) ReadByte() (byte, error) {
	if br, ok := c.R.(io.ByteReader); ok {
		b, err := br.ReadByte()
		if err == nil {
			c.N++
		}
		return b, err
	}
	var one [1]byte
	_, err := io.ReadFull(c, one[:])
	return one[0], err
}

// Ratio returns a reader of out, the decompressed side of a stream whose
// stored bytes so far in reports, that fails, naming name, once out has
// given more than RatioSlack bytes and more than maxRatio times in().
func Ratio(out io.Reader, in func() int64, name string, maxRatio int64) io.Reader {
	return &ratioReader{r: out, in: in, name: name, max: maxRatio}
}

type ratioReader struct {
	r    io.Reader
	in   func() int64
	name string
	max  int64
	out  int64
}

func (z *ratioReader) Read(p []byte) (int, error) {
	k, err := z.r.Read(p)
	z.out += int64(k)
	if err := CheckRatio(z.name, z.out, z.in(), z.max); err != nil {
		return k, err
	}
	return k, err
}

// CheckRatio fails when out bytes made from in stored bytes pass
// RatioSlack and maxRatio times in: a decompression bomb. Readers call it
// before decoding with sizes a header declares (an image's pixels, a zip
// member's size) and, through Ratio, as a stream decompresses.
func CheckRatio(name string, out, in, maxRatio int64) error {
	if maxRatio > 0 && out > RatioSlack && (out-1)/maxRatio >= max(in, 0) { // out > maxRatio*in, without overflow
		return fmt.Errorf("%s: %d stored bytes expand into more than %d, over %d times: %w (decompress it yourself, or raise Limits.MaxRatio, to read it)",
			name, in, out, maxRatio, ErrBomb)
	}
	return nil
}
