package tensorboard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
)

// MaxRecordBytes is the largest record Read accepts: far above any scalar
// event (a few dozen bytes per scalar), far below what a hostile length
// field could ask a reader to allocate.
const MaxRecordBytes = 1 << 20

// Scalar is one simple_value of an event file.
type Scalar struct {
	Step  int64
	Value float32 // simple_value is a float32 field
	Wall  time.Time
}

// Read reads the event file at path and returns its scalars by tag, each
// tag's in the order of the file. It checks both CRCs of every record and
// that the first event names a "brain.Event:" file version; records larger
// than MaxRecordBytes are refused. Summary values other than simple values
// (tensors, images, histograms) and unknown Event fields are skipped.
func Read(path string) (map[string][]Scalar, error) {
	return ReadLimit(path, MaxRecordBytes)
}

// ReadLimit is Read with maxRecord as the largest record accepted.
func ReadLimit(path string, maxRecord int) (map[string][]Scalar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("tensorboard: %s is not a regular file", path)
	}
	s, err := Parse(f, fi.Size(), maxRecord)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads an event file of size bytes from r, as Read does. Every
// length it reads is bounded by the bytes left of size and by maxRecord
// before anything is allocated for it, so a hostile file never allocates
// more than its size justifies. Errors name the offset of the record.
func Parse(r io.Reader, size int64, maxRecord int) (map[string][]Scalar, error) {
	if r == nil {
		return nil, errors.New("tensorboard: Parse of a nil reader")
	}
	out := map[string][]Scalar{}
	var head [12]byte
	var off int64
	for n := 0; off < size; n++ {
		left := size - off
		if left < int64(len(head)) {
			return nil, fmt.Errorf("tensorboard: record at offset %d: truncated: its header needs %d bytes, %d left", off, len(head), left)
		}
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, fmt.Errorf("tensorboard: record at offset %d: %w", off, eof(err))
		}
		length := binary.LittleEndian.Uint64(head[:8])
		if got, want := binary.LittleEndian.Uint32(head[8:]), maskCRC(head[:8]); got != want {
			return nil, fmt.Errorf("tensorboard: record at offset %d: length CRC mismatch (stored %#08x, computed %#08x)", off, got, want)
		}
		if length > uint64(maxRecord) {
			return nil, fmt.Errorf("tensorboard: record at offset %d: %d bytes, more than the limit of %d", off, length, maxRecord)
		}
		if need := length + 4; need > uint64(left-12) {
			return nil, fmt.Errorf("tensorboard: record at offset %d: truncated: its %d data bytes and CRC need %d bytes, %d left", off, length, need, left-12)
		}
		buf := make([]byte, length+4)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("tensorboard: record at offset %d: %w", off, eof(err))
		}
		data := buf[:length]
		if got, want := binary.LittleEndian.Uint32(buf[length:]), maskCRC(data); got != want {
			return nil, fmt.Errorf("tensorboard: record at offset %d: data CRC mismatch (stored %#08x, computed %#08x)", off, got, want)
		}
		ev, err := parseEvent(data)
		if err != nil {
			return nil, fmt.Errorf("tensorboard: record at offset %d: %w", off, err)
		}
		if n == 0 && !strings.HasPrefix(ev.fileVersion, "brain.Event:") {
			return nil, fmt.Errorf("tensorboard: record at offset %d: the first event has file version %q, not brain.Event:N", off, ev.fileVersion)
		}
		for _, v := range ev.values {
			out[v.tag] = append(out[v.tag], Scalar{Step: ev.step, Value: v.v, Wall: ev.wall})
		}
		off += 12 + int64(length) + 4
	}
	if off == 0 {
		return nil, errors.New("tensorboard: empty event file")
	}
	return out, nil
}

// eof reports a reader that ended before the size it was said to hold.
func eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// parsedEvent is what Parse keeps of an Event.
type parsedEvent struct {
	wall        time.Time
	step        int64
	fileVersion string
	values      []value
}

// field is one field of a protobuf message: its number and wire type, and
// its varint or fixed value (num) or its bytes (b, wireLen).
type field struct {
	n, wire int
	num     uint64
	b       []byte
}

// fields calls fn for each field of the message in b. Lengths are bounded
// by the bytes of b left; groups (wire types 3 and 4, deprecated) are
// refused.
func fields(b []byte, fn func(field) error) error {
	for len(b) > 0 {
		key, k := binary.Uvarint(b)
		if k <= 0 {
			return errors.New("malformed field key")
		}
		b = b[k:]
		f := field{wire: int(key & 7)}
		if key>>3 == 0 || key>>3 > math.MaxInt32 {
			return fmt.Errorf("field number %d out of range", key>>3)
		}
		f.n = int(key >> 3)
		switch f.wire {
		case wireVarint:
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return fmt.Errorf("field %d: malformed varint", f.n)
			}
			f.num, b = v, b[k:]
		case wireI64:
			if len(b) < 8 {
				return fmt.Errorf("field %d: truncated fixed64", f.n)
			}
			f.num, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireI32:
			if len(b) < 4 {
				return fmt.Errorf("field %d: truncated fixed32", f.n)
			}
			f.num, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireLen:
			l, k := binary.Uvarint(b)
			if k <= 0 {
				return fmt.Errorf("field %d: malformed length", f.n)
			}
			b = b[k:]
			if l > uint64(len(b)) {
				return fmt.Errorf("field %d: length %d beyond the message's %d bytes left", f.n, l, len(b))
			}
			f.b, b = b[:l], b[l:]
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", f.n, f.wire)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// want checks that f has the wire type its field number declares.
func (f field) want(wire int, msg string) error {
	if f.wire != wire {
		return fmt.Errorf("%s: field %d has wire type %d, not %d", msg, f.n, f.wire, wire)
	}
	return nil
}

// parseEvent decodes the Event fields Parse keeps; a repeated singular
// field keeps its last value and a repeated summary merges, as protobuf
// decoders do.
func parseEvent(b []byte) (parsedEvent, error) {
	var ev parsedEvent
	var wall float64
	err := fields(b, func(f field) error {
		switch f.n {
		case fieldWallTime:
			if err := f.want(wireI64, "Event"); err != nil {
				return err
			}
			wall = math.Float64frombits(f.num)
		case fieldStep:
			if err := f.want(wireVarint, "Event"); err != nil {
				return err
			}
			ev.step = int64(f.num)
		case fieldFileVersion:
			if err := f.want(wireLen, "Event"); err != nil {
				return err
			}
			ev.fileVersion = string(f.b)
		case fieldSummary:
			if err := f.want(wireLen, "Event"); err != nil {
				return err
			}
			return fields(f.b, func(f field) error {
				if f.n != fieldValue {
					return nil
				}
				if err := f.want(wireLen, "Summary"); err != nil {
					return err
				}
				v, ok, err := parseValue(f.b)
				if ok {
					ev.values = append(ev.values, v)
				}
				return err
			})
		}
		return nil
	})
	if err != nil {
		return ev, err
	}
	// wall_time is seconds since the epoch; keep it within time.Time's
	// exact range (about ±292 years of nanoseconds).
	if math.IsNaN(wall) || math.Abs(wall) > 9e9 {
		return ev, fmt.Errorf("Event: wall_time %v out of range", wall)
	}
	sec := math.Floor(wall)
	ev.wall = time.Unix(int64(sec), int64(math.Round((wall-sec)*1e9))).UTC()
	return ev, nil
}

// parseValue decodes a Summary.Value; ok is false for a value that is not
// a simple_value (a tensor, an image...).
func parseValue(b []byte) (v value, ok bool, err error) {
	err = fields(b, func(f field) error {
		switch f.n {
		case fieldTag:
			if err := f.want(wireLen, "Summary.Value"); err != nil {
				return err
			}
			v.tag = string(f.b)
		case fieldSimpleValue:
			if err := f.want(wireI32, "Summary.Value"); err != nil {
				return err
			}
			v.v, ok = math.Float32frombits(uint32(f.num)), true
		}
		return nil
	})
	return v, ok && err == nil, err
}
