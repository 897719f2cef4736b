package checkpoint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// SaveMeta's metadata comes back from Meta (without the checksums) and
// from Read beside them; the parameters still load; a reserved key is
// refused and writes nothing.
func TestSaveMetaRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ps := model(t, 3)
	meta := map[string]string{
		"plumb/chapter": "mnist",
		"plumb/config":  `{"model":"mlp"}`,
		"plumb/vocab":   strings.Repeat("wörter\n", 100),
		"":              "an empty key is a key",
	}
	for _, c := range []struct {
		name string
		meta map[string]string
		want map[string]string
	}{
		{"with metadata", meta, meta},
		{"nil", nil, map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".safetensors")
			require.NoError(t, SaveMeta(path, ps, nil, c.meta))
			got, err := Meta(path)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			_, all, err := Read(path)
			require.NoError(t, err)
			require.Len(t, all, len(c.want)+len(ps), "the checksums are there too")
			fresh := model(t, 4)
			require.NoError(t, Load(path, fresh, nil))
			assertSameValues(t, ps, fresh)
		})
	}
	bad := filepath.Join(dir, "bad.safetensors")
	err := SaveMeta(bad, ps, nil, map[string]string{checksumPrefix + "dense/kernel": "00000000"})
	require.ErrorContains(t, err, "reserved")
	require.NoFileExists(t, bad)
	_, err = Meta(filepath.Join(dir, "missing.safetensors"))
	require.ErrorContains(t, err, "no such file")
}
