package checkpoint

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/optim"
)

// FuzzLoad feeds arbitrary bytes to the loader, with parameters and an
// optimizer laid out as in the seed file so that inputs close to valid
// reach the copying code. It must never panic.
func FuzzLoad(f *testing.F) {
	ps, opt := trained(f, 1)
	var buf bytes.Buffer
	entries, err := collect(ps, opt)
	require.NoError(f, err)
	require.NoError(f, encode(&buf, entries, nil))
	valid := buf.Bytes()
	f.Add(valid)
	for _, n := range []int{0, 7, 8, 9, 40, len(valid) / 2, len(valid) - 1} {
		f.Add(valid[:n])
	}
	f.Add(file(`{"__metadata__": {"format": "pt"}, "a": {"dtype": "I32", "shape": [], "data_offsets": [0, 4]}}`, 1, 2, 3, 4))

	f.Fuzz(func(t *testing.T, data []byte) {
		ps := model(t, 2)
		opt, err := optim.NewAdam(ps)
		require.NoError(t, err)
		r := bytes.NewReader(data)
		_ = load(r, int64(len(data)), ps, opt)
		_ = load(r, int64(len(data)), ps, nil)
		if h, err := parse(data); err == nil {
			for name, in := range h.tensors {
				require.LessOrEqual(t, in.end, h.dataLen)
				_, _ = h.read(r, name, in)
			}
		}
	})
}
