// Package tensorboard writes and reads TensorBoard event files, so that
// `tensorboard --logdir` shows a Plumb run's scalars (losses, metrics,
// learning rate, samples/s, RSS) beside Keras and PyTorch runs. It imports
// only the standard library.
//
// An event file is a sequence of TFRecord records, each
//
//	uint64 length               little-endian
//	uint32 masked CRC-32C       of the 8 length bytes
//	byte   data[length]         one serialized Event protobuf
//	uint32 masked CRC-32C       of the data
//
// where CRC-32C is the Castagnoli CRC and masking is
// ((crc >> 15) | (crc << 17)) + 0xa282ead8 (TensorFlow's
// tensorflow/core/lib/io/record_writer.cc, and Mask in TSL's
// lib/hash/crc32c.h, which comes from LevelDB). The Event message is the
// subset of tensorflow/core/util/event.proto and
// tensorflow/core/framework/summary.proto that scalars need:
//
//	Event   { double wall_time = 1; int64 step = 2;
//	          string file_version = 3; Summary summary = 5; }
//	Summary { repeated Value value = 1; }
//	Value   { string tag = 1; float simple_value = 2; }
//
// The first event of a file carries wall_time, step 0 and file_version
// "brain.Event:2"; every later one a step and a Summary of simple values,
// all the scalars of one Scalars call in one event.
// A simple_value is a 32-bit float, so TensorBoard shows a scalar to float32
// precision: Read returns the float32 that was stored.
//
// The messages are encoded by hand with a small wire-format encoder
// (varints, fixed 32- and 64-bit fields, length-delimited fields) rather
// than with a protobuf library: three fixed messages need a few dozen
// lines, no generated code or new dependency is needed for them, and the
// package stays on the standard library like runlog. Package tblog maps
// run-log records to these scalars.
package tensorboard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// FileVersion is the file_version of an event file's first event; TensorBoard
// reads files of this version.
const FileVersion = "brain.Event:2"

// FilePrefix begins every event file's name; TensorBoard's directory
// watcher picks up the files whose names contain "tfevents".
const FilePrefix = "events.out.tfevents."

// castagnoli is the CRC-32C table TFRecord framing uses.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is added to the rotated CRC by maskCRC.
const maskDelta = 0xa282ead8

// maskCRC returns TFRecord's masked CRC-32C of b: the CRC rotated right by
// 15 bits plus a constant, so that a CRC stored inside CRC-ed data does
// not weaken the outer check.
func maskCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + maskDelta
}

// frame returns data as one TFRecord record.
func frame(data []byte) []byte {
	rec := make([]byte, 0, 12+len(data)+4)
	rec = binary.LittleEndian.AppendUint64(rec, uint64(len(data)))
	rec = binary.LittleEndian.AppendUint32(rec, maskCRC(rec[:8]))
	rec = append(rec, data...)
	return binary.LittleEndian.AppendUint32(rec, maskCRC(data))
}

// Protobuf wire types (protobuf's encoding documentation, "Message
// Structure").
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

// Field numbers of the Event, Summary and Summary.Value messages.
const (
	fieldWallTime    = 1 // Event.wall_time, double
	fieldStep        = 2 // Event.step, int64
	fieldFileVersion = 3 // Event.file_version, string
	fieldSummary     = 5 // Event.summary, Summary
	fieldValue       = 1 // Summary.value, repeated Value
	fieldTag         = 1 // Value.tag, string
	fieldSimpleValue = 2 // Value.simple_value, float
)

func appendKey(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = appendKey(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// event encodes an Event. An int64 is a varint of its two's complement
// (not zig-zag: the field is int64, not sint64).
func event(wall time.Time, step int64, fileVersion string, values []value) []byte {
	var b []byte
	b = appendKey(b, fieldWallTime, wireI64)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(wallSeconds(wall)))
	b = appendKey(b, fieldStep, wireVarint)
	b = binary.AppendUvarint(b, uint64(step))
	if fileVersion != "" {
		b = appendBytes(b, fieldFileVersion, []byte(fileVersion))
	}
	if len(values) > 0 {
		var sum []byte
		for _, v := range values {
			var m []byte
			m = appendBytes(m, fieldTag, []byte(v.tag))
			m = appendKey(m, fieldSimpleValue, wireI32)
			m = binary.LittleEndian.AppendUint32(m, math.Float32bits(v.v))
			sum = appendBytes(sum, fieldValue, m)
		}
		b = appendBytes(b, fieldSummary, sum)
	}
	return b
}

// value is one Summary.Value.
type value struct {
	tag string
	v   float32
}

// wallSeconds is TensorBoard's wall_time: seconds since the Unix epoch.
func wallSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// Writer appends events to one event file. Each event is one write of one
// whole record to a file opened for appending, so a crash leaves at most a
// torn last record. After a failed write the Writer cuts the partial record
// off again, when it can, and refuses every later event with the same
// error. A Writer is not safe for concurrent use.
type Writer struct {
	f    *os.File
	name string
	off  int64 // bytes of whole records in f
	err  error // the first failed write's error, returned ever after
}

// seq makes the names of files created in the same second by one process
// distinct.
var seq atomic.Int64

// Create makes dir (if needed) and starts a new event file in it, named
// events.out.tfevents.<unix seconds>.<hostname>.<pid>.<n> as TensorFlow's
// and PyTorch's writers name theirs; n makes the name unique within the
// process, and the file is created exclusively, never overwriting one.
// The file's first event carries FileVersion.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, host)
	now := time.Now()
	name := filepath.Join(dir, fmt.Sprintf("%s%d.%s.%d.%d", FilePrefix, now.Unix(), host, os.Getpid(), seq.Add(1)))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	w := &Writer{f: f, name: name}
	if err := w.write(event(now, 0, FileVersion, nil)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// errNoWriter is the error of a Writer not made by Create.
var errNoWriter = errors.New("tensorboard: a Writer not made by Create")

// Name returns the event file's path ("" for a Writer not made by Create).
func (w *Writer) Name() string {
	if w == nil {
		return ""
	}
	return w.name
}

// Scalar writes one event holding one scalar. A zero wall is the current
// time.
func (w *Writer) Scalar(tag string, step int64, v float64, wall time.Time) error {
	return w.Scalars(step, map[string]float64{tag: v}, wall)
}

// Scalars writes one event holding every scalar of step, in the order of
// their tags, as one record. A zero wall is the current time. Tags must be
// non-empty UTF-8 (protobuf strings are UTF-8); an empty map writes
// nothing.
func (w *Writer) Scalars(step int64, scalars map[string]float64, wall time.Time) error {
	if w == nil || (w.f == nil && w.err == nil) {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if len(scalars) == 0 {
		return nil
	}
	tags := make([]string, 0, len(scalars))
	for tag := range scalars {
		if tag == "" || !utf8.ValidString(tag) {
			return fmt.Errorf("tensorboard: tag %q is not a non-empty UTF-8 string", tag)
		}
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	values := make([]value, len(tags))
	for i, tag := range tags {
		values[i] = value{tag, float32(scalars[tag])}
	}
	if wall.IsZero() {
		wall = time.Now()
	}
	return w.write(event(wall, step, "", values))
}

// write appends data as one record in one write.
func (w *Writer) write(data []byte) error {
	if w.err != nil {
		return w.err
	}
	rec := frame(data)
	n, err := w.f.Write(rec)
	if err != nil {
		if n > 0 {
			_ = w.f.Truncate(w.off) // best effort: keep the file a sequence of whole records
		}
		w.err = fmt.Errorf("tensorboard: %s: %w", w.name, err)
		return w.err
	}
	w.off += int64(n)
	return nil
}

// Flush commits the events written so far to stable storage. The Writer
// buffers nothing (each event is written when it is given), so a reader
// sees every event without Flush; Flush is for surviving a machine crash.
func (w *Writer) Flush() error {
	if w == nil || (w.f == nil && w.err == nil) {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("tensorboard: %s: %w", w.name, err)
	}
	return nil
}

// Close flushes and closes the file. It returns the first failed write's
// error, if any; later calls of any method return an error.
func (w *Writer) Close() error {
	if w == nil || (w.f == nil && w.err == nil) {
		return errNoWriter
	}
	if w.f == nil {
		return w.err
	}
	syncErr := w.f.Sync()
	closeErr := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	if err := errors.Join(syncErr, closeErr); err != nil {
		w.err = fmt.Errorf("tensorboard: %s: %w", w.name, err)
		return w.err
	}
	w.err = errors.New("tensorboard: " + w.name + ": writer closed")
	return nil
}
