package tensorboard

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzEvents is a small valid event file: the version event, then two
// scalar events.
func fuzzEvents() []byte {
	b := frame(event(time.Unix(1700000000, 0), 0, FileVersion, nil))
	b = append(b, frame(event(time.Unix(1700000001, 0), 1, "", []value{{"loss", 0.5}, {"lr", 1e-3}}))...)
	return append(b, frame(event(time.Unix(1700000002, 0), 2, "", []value{{"loss", 0.25}}))...)
}

// FuzzRead feeds arbitrary bytes to the event-file reader with a small
// record limit. It must never panic, must refuse a reader shorter than
// the size it is given, and what it accepts holds no more scalars than
// the bytes justify (a Summary.Value with a simple_value takes at least
// 7 bytes: its key and length, the value's key and 4 bytes).
func FuzzRead(f *testing.F) {
	good := fuzzEvents()
	for _, seed := range [][]byte{
		nil,
		good,
		good[:len(good)-3],
		frame([]byte{0x1a, 0x0d, 'b', 'r', 'a', 'i', 'n', '.', 'E', 'v', 'e', 'n', 't', ':', '2', 0x2a, 0x02, 0x0a, 0x00}),
		hugeLength(),
	} {
		f.Add(seed)
	}
	const maxRecord = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(bytes.NewReader(data), int64(len(data)), maxRecord)
		if err == nil {
			n := 0
			for _, s := range got {
				n += len(s)
			}
			require.LessOrEqual(t, 7*n, len(data))
		}
		if len(data) > 0 {
			_, err = Parse(bytes.NewReader(data[:len(data)-1]), int64(len(data)), maxRecord)
			require.Error(t, err, "a reader shorter than its size")
		}
	})
}
