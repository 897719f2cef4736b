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

// Zero fields take the defaults; set ones stay.
func TestLimitsResolve(t *testing.T) {
	got := Limits{MaxRatio: 7, MaxLineBytes: -1}.Resolve()
	want := Default()
	want.MaxRatio = 7
	require.Equal(t, want, got)
}

func TestCheckRatio(t *testing.T) {
	for _, c := range []struct {
		name         string
		out, in, max int64
		bomb         bool
	}{
		{"within the slack", RatioSlack, 1, 100, false},
		{"at the ratio", 100 * RatioSlack, RatioSlack, 100, false},
		{"past the ratio", 100*RatioSlack + 1, RatioSlack, 100, true},
		{"nothing stored", RatioSlack + 1, 0, 100, true},
		{"huge ratio, no overflow", 1 << 62, 1, 1 << 62, false},
	} {
		err := CheckRatio("f", c.out, c.in, c.max)
		if c.bomb {
			require.ErrorIs(t, err, ErrBomb, c.name)
		} else {
			require.NoError(t, err, c.name)
		}
	}
}

// A Budget fails once more than its limit is taken, naming where; Cap
// fails past its limit and draws on a shared total.
func TestBudgetAndCap(t *testing.T) {
	b := Budget{Name: "records", Limit: 2}
	require.NoError(t, b.Take(2, "f"))
	require.ErrorContains(t, b.Take(1, "f line 3"), "f line 3: more than 2 records")
	total := Budget{Name: "bytes", Limit: 5}
	_, err := io.ReadAll(Cap(bytes.NewReader(make([]byte, 4)), "a", 10, &total))
	require.NoError(t, err)
	_, err = io.ReadAll(Cap(bytes.NewReader(make([]byte, 4)), "b", 10, &total))
	require.ErrorIs(t, err, ErrTooBig)
	_, err = io.ReadAll(Cap(bytes.NewReader(make([]byte, 4)), "c", 3, nil))
	require.ErrorContains(t, err, "c: more than 3 bytes")
}
