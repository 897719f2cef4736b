package tensorboard

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaskCRC checks the masked CRC-32C and the framing against records
// that TensorFlow's tf.io.TFRecordWriter wrote (TensorFlow 2.21), and the
// CRC-32C itself against the standard check value of "123456789".
func TestMaskCRC(t *testing.T) {
	assert.Equal(t, uint32(0xe3069283), crc32cOf([]byte("123456789")))
	for _, tc := range []struct {
		payload string
		record  string // hex, as TensorFlow wrote it
	}{
		{"", "000000000000000029039807d8ea82a2"},
		{"123456789", "090000000000000037f97139313233343536373839e5b08ac7"},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			assert.Equal(t, tc.record, hex.EncodeToString(frame([]byte(tc.payload))))
		})
	}
	// ((0xe3069283 >> 15) | (0xe3069283 << 17)) + 0xa282ead8, by hand.
	assert.Equal(t, uint32(0xc78ab0e5), maskCRC([]byte("123456789")))
}

func crc32cOf(b []byte) uint32 {
	// Undo the mask: the rotation's inverse is a rotation left by 15.
	m := maskCRC(b) - maskDelta
	return m<<15 | m>>17
}

// TestEventBytes checks one event's encoding field by field.
func TestEventBytes(t *testing.T) {
	wall := time.Unix(1700000000, 500000000)
	got := event(wall, 300, "", []value{{"loss", 0.25}})
	var want []byte
	want = append(want, 0x09) // field 1, fixed64
	want = binary.LittleEndian.AppendUint64(want, math.Float64bits(1700000000.5))
	want = append(want, 0x10, 0xac, 0x02) // field 2, varint 300
	want = append(want, 0x2a, 0x0d)       // field 5, 13 bytes
	want = append(want, 0x0a, 0x0b)       // Summary.value, 11 bytes
	want = append(want, 0x0a, 0x04)       // Value.tag, 4 bytes
	want = append(want, "loss"...)        //
	want = append(want, 0x15)             // Value.simple_value, fixed32
	want = append(want, 0, 0, 0x80, 0x3e) // 0.25
	assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got))
}

func TestWriteRead(t *testing.T) {
	base := time.Unix(1700000000, 123456000)
	type step struct {
		step   int64
		values map[string]float64
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  map[string][]float32
	}{
		{"none", nil, map[string][]float32{}},
		{"one", []step{{1, map[string]float64{"loss": 2.5}}}, map[string][]float32{"loss": {2.5}}},
		{"batch", []step{
			{0, map[string]float64{"train/loss": 2.3, "lr": 1e-3}},
			{50, map[string]float64{"train/loss": 0.9, "lr": 1e-3, "samples_per_sec": 5000}},
			{100, map[string]float64{"train/loss": -0.5, "accuracy": 0, "rss_bytes": 3 << 30}},
		}, map[string][]float32{
			"train/loss":      {2.3, 0.9, -0.5},
			"lr":              {1e-3, 1e-3},
			"samples_per_sec": {5000},
			"accuracy":        {0},
			"rss_bytes":       {3 << 30},
		}},
		{"negative step and unicode tag", []step{{-7, map[string]float64{"métrique/β": math.Inf(1)}}},
			map[string][]float32{"métrique/β": {float32(math.Inf(1))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			w, err := Create(dir)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(filepath.Base(w.Name()), FilePrefix))
			for i, s := range tc.steps {
				require.NoError(t, w.Scalars(s.step, s.values, base.Add(time.Duration(i)*time.Second)))
			}
			require.NoError(t, w.Flush())
			require.NoError(t, w.Close())

			got, err := Read(w.Name())
			require.NoError(t, err)
			require.Len(t, got, len(tc.want))
			for tag, vs := range tc.want {
				require.Len(t, got[tag], len(vs), tag)
				for i, v := range vs {
					assert.Equal(t, v, got[tag][i].Value, tag)
				}
			}
			for i, s := range tc.steps {
				for tag := range s.values {
					var found bool
					for _, sc := range got[tag] {
						if sc.Step == s.step {
							found = true
							assert.WithinDuration(t, base.Add(time.Duration(i)*time.Second), sc.Wall, time.Microsecond)
						}
					}
					assert.True(t, found, "%s at step %d", tag, s.step)
				}
			}
		})
	}
}

func TestScalarAndErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	require.NoError(t, err)
	w2, err := Create(dir)
	require.NoError(t, err)
	assert.NotEqual(t, w.Name(), w2.Name(), "two writers in one second get two files")
	require.NoError(t, w2.Close())

	before := time.Now()
	require.NoError(t, w.Scalar("loss", 3, 0.5, time.Time{}))
	assert.ErrorContains(t, w.Scalar("", 4, 1, time.Time{}), "tag")
	assert.ErrorContains(t, w.Scalar("\xff", 4, 1, time.Time{}), "UTF-8")
	require.NoError(t, w.Close())
	assert.Error(t, w.Scalar("loss", 5, 1, time.Time{}), "a closed writer refuses events")

	got, err := Read(w.Name())
	require.NoError(t, err)
	require.Len(t, got["loss"], 1)
	assert.Equal(t, int64(3), got["loss"][0].Step)
	assert.False(t, got["loss"][0].Wall.Before(before.Add(-time.Microsecond)), "a zero wall is now")
}

// written returns an event file's bytes: the version event and two
// scalar events; offs are the records' offsets.
func written(t *testing.T) (data []byte, offs []int) {
	w, err := Create(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, w.Scalar("loss", 1, 0.5, time.Unix(1700000000, 0)))
	require.NoError(t, w.Scalar("loss", 2, 0.25, time.Unix(1700000001, 0)))
	require.NoError(t, w.Close())
	data, err = os.ReadFile(w.Name())
	require.NoError(t, err)
	for off := 0; off < len(data); off += 16 + int(binary.LittleEndian.Uint64(data[off:])) {
		offs = append(offs, off)
	}
	require.Len(t, offs, 3)
	return data, offs
}

func TestReadCorrupt(t *testing.T) {
	data, offs := written(t)
	flip := func(i int) []byte {
		b := bytes.Clone(data)
		b[i] ^= 1
		return b
	}
	second := offs[1]
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"length CRC", flip(second + 8), "record at offset " + itoa(second) + ": length CRC mismatch"},
		{"length", flip(second), "record at offset " + itoa(second) + ": length CRC mismatch"},
		{"data", flip(second + 14), "record at offset " + itoa(second) + ": data CRC mismatch"},
		{"data CRC", flip(offs[2] - 1), "record at offset " + itoa(second) + ": data CRC mismatch"},
		{"truncated data", data[:len(data)-3], "record at offset " + itoa(offs[2]) + ": truncated"},
		{"truncated header", data[:offs[2]+5], "record at offset " + itoa(offs[2]) + ": truncated"},
		{"empty", nil, "empty event file"},
		{"not an event file", frame([]byte{0x10, 0x01}), "record at offset 0: the first event has file version"},
		{"huge length", hugeLength(), "record at offset 0: 1099511627776 bytes, more than the limit"},
		{"bad protobuf", frame([]byte{0x0a, 0x05, 'x'}), "record at offset 0: field 1: length 5 beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.out.tfevents.1.x")
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			_, err := Read(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// hugeLength is a record header claiming a terabyte of data, its length
// CRC right.
func hugeLength() []byte {
	b := binary.LittleEndian.AppendUint64(nil, 1<<40)
	return binary.LittleEndian.AppendUint32(b, maskCRC(b))
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestExportForCheck writes an event directory, DIR/run, and the values
// it holds, DIR/expected.json (tag -> [[step, value], ...]), for
// bench/tensorboard_check.py when PLUMB_TB_EXPORT names DIR; otherwise it
// is skipped.
func TestExportForCheck(t *testing.T) {
	dir := os.Getenv("PLUMB_TB_EXPORT")
	if dir == "" {
		t.Skip("PLUMB_TB_EXPORT not set")
	}
	w, err := Create(filepath.Join(dir, "run"))
	require.NoError(t, err)
	expected := map[string][][2]float64{}
	wall := time.Unix(1700000000, 0)
	for step := int64(0); step <= 200; step += 50 {
		values := map[string]float64{
			"loss":            2.5 / float64(step+1),
			"lr":              1e-3 * math.Pow(0.9, float64(step/50)),
			"samples_per_sec": 5000 + float64(step),
			"rss_bytes":       float64(100<<20 + step<<10),
		}
		if step%100 == 0 {
			values["val/accuracy"] = 0.5 + float64(step)/1000
		}
		require.NoError(t, w.Scalars(step, values, wall.Add(time.Duration(step)*time.Second)))
		for tag, v := range values {
			// The file stores float32; expected.json holds the value stored.
			expected[tag] = append(expected[tag], [2]float64{float64(step), float64(float32(v))})
		}
	}
	require.NoError(t, w.Close())
	b, err := json.MarshalIndent(expected, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expected.json"), b, 0o644))
}
