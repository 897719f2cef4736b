package mnist

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/internal/datatest"
)

// idxBytes encodes an IDX file with the given type code, dims and data.
func idxBytes(typeCode byte, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, typeCode, byte(len(dims))})
	for _, d := range dims {
		_ = binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	return b.Bytes()
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func TestReadIDXValid(t *testing.T) {
	tests := []struct {
		name string
		dims []uint32
	}{
		{name: "labels", dims: []uint32{5}},
		{name: "images", dims: []uint32{3, 4, 2}},
		{name: "no examples", dims: []uint32{0, 28, 28}},
		{name: "rank 4", dims: []uint32{2, 1, 3, 3}},
	}
	for _, tc := range tests {
		n := 1
		want := make([]int, len(tc.dims))
		for i, d := range tc.dims {
			n *= int(d)
			want[i] = int(d)
		}
		raw := idxBytes(idxUbyte, tc.dims, seq(n))
		for enc, file := range map[string][]byte{"raw": raw, "gzip": datatest.Gzip(t, raw)} {
			t.Run(tc.name+"/"+enc, func(t *testing.T) {
				got, err := ReadIDX(bytes.NewReader(file))
				require.NoError(t, err)
				assert.Equal(t, want, got.Dims)
				assert.Equal(t, seq(n), got.Data)
			})
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	valid := idxBytes(idxUbyte, []uint32{2, 3}, seq(6))
	badCRC := datatest.Gzip(t, valid)
	badCRC[len(badCRC)-8] ^= 0xff // the CRC-32 of the gzip footer
	tests := []struct {
		name    string
		file    []byte
		wantErr string
	}{
		{name: "empty", file: nil, wantErr: "truncated"},
		{name: "short magic", file: []byte{0, 0, 8}, wantErr: "truncated"},
		{name: "bad magic", file: idxBytes(idxUbyte, []uint32{1}, seq(1))[1:], wantErr: "bad magic"},
		{name: "non-zero magic bytes", file: append([]byte{1, 0}, valid[2:]...), wantErr: "bad magic"},
		{name: "wrong type code (int)", file: idxBytes(0x0C, []uint32{2}, seq(8)), wantErr: "type code 0x0c not supported"},
		{name: "wrong type code (float)", file: idxBytes(0x0D, []uint32{2}, seq(8)), wantErr: "type code 0x0d"},
		{name: "rank 0", file: idxBytes(idxUbyte, nil, seq(1)), wantErr: "rank 0"},
		{name: "truncated header", file: valid[:9], wantErr: "reading 2 dims: truncated"},
		{name: "truncated data", file: valid[:len(valid)-1], wantErr: "want 6 bytes of data, got 5: truncated"},
		{name: "no data", file: valid[:12], wantErr: "got 0: truncated"},
		{name: "trailing bytes", file: append(append([]byte{}, valid...), 0), wantErr: "more follow"},
		{name: "dims product overflow", file: idxBytes(idxUbyte, []uint32{1 << 31, 1 << 31, 1 << 31}, nil), wantErr: "more elements than an int"},
		{name: "huge dims, little data", file: idxBytes(idxUbyte, []uint32{1 << 30, 1 << 20}, seq(10)), wantErr: "more than the limit of 1073741824"},
		{name: "large dims, little data", file: idxBytes(idxUbyte, []uint32{1 << 29}, seq(10)), wantErr: "got 10: truncated"},
		{name: "gzip truncated", file: datatest.Gzip(t, valid)[:20], wantErr: "truncated"},
		{name: "gzip bad header", file: []byte{0x1f, 0x8b, 0, 0}, wantErr: "gzip"},
		{name: "gzip bad checksum", file: badCRC, wantErr: "checksum"},
		{name: "gzip of a truncated file", file: datatest.Gzip(t, valid[:10]), wantErr: "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadIDX(bytes.NewReader(tc.file))
			require.ErrorContains(t, err, tc.wantErr)
			assert.Nil(t, got)
		})
	}
}

// failingReader returns its bytes and then a non-EOF error.
type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, io.ErrClosedPipe
	}
	return n, err
}

func TestReadIDXReaderError(t *testing.T) {
	valid := idxBytes(idxUbyte, []uint32{2, 3}, seq(6))
	_, err := ReadIDX(&failingReader{bytes.NewReader(valid[:10])})
	require.ErrorIs(t, err, io.ErrClosedPipe)
	_, err = ReadIDX(&failingReader{bytes.NewReader(valid)})
	require.ErrorIs(t, err, io.ErrClosedPipe, "an error after the data is reported too")
}

func FuzzReadIDX(f *testing.F) {
	valid := idxBytes(idxUbyte, []uint32{2, 3}, seq(6))
	f.Add(valid)
	f.Add(valid[:len(valid)-2])
	f.Add(valid[:7])
	f.Add(idxBytes(idxUbyte, []uint32{4}, seq(4)))
	f.Add(idxBytes(idxUbyte, []uint32{0, 5, 5}, nil))
	f.Add(idxBytes(idxUbyte, []uint32{1 << 31, 1 << 31, 4}, nil))
	f.Add(datatest.Gzip(f, valid))
	f.Add(datatest.Gzip(f, valid)[:15])
	f.Add(datatest.Gzip(f, valid[:9]))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadIDX(bytes.NewReader(b))
		if err != nil {
			assert.Nil(t, got)
			return
		}
		n := 1
		for _, d := range got.Dims {
			require.GreaterOrEqual(t, d, 0)
			n *= d
		}
		require.NotEmpty(t, got.Dims)
		require.Len(t, got.Data, n)
	})
}
