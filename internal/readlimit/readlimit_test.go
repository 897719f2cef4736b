package readlimit

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestFull(t *testing.T) {
	data := bytes.Repeat([]byte{1, 2, 3}, 100000)
	for _, c := range []struct {
		name string
		r    io.Reader
		n    int64
		err  string
	}{
		{"exact", bytes.NewReader(data), int64(len(data)), ""},
		{"prefix", bytes.NewReader(data), 1000, ""},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data[:5000])), 5000, ""},
		{"zero", bytes.NewReader(nil), 0, ""},
		{"short", bytes.NewReader(data), int64(len(data)) + 1, "unexpected EOF"},
		{"huge claim", bytes.NewReader(data[:10]), 1 << 50, "got 10 of"},
		{"negative", bytes.NewReader(data), -1, "negative"},
		{"nil reader", nil, 1, "nil reader"},
		{"reader error", iotest.ErrReader(io.ErrClosedPipe), 4, "closed pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Full(c.r, c.n)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, data[:c.n], got)
		})
	}
}

// A claim of 1 PiB backed by 10 bytes allocates kilobytes, not the claim.
func TestFullAllocatesWhatArrives(t *testing.T) {
	allocs := testing.AllocsPerRun(1, func() {
		_, _ = Full(bytes.NewReader(make([]byte, 10)), 1<<50)
	})
	require.Less(t, allocs, 10.0)
}
