package train

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
)

// Config.Meta goes into every checkpoint the run writes: the best epoch's
// parameters and the resumable state.
func TestConfigMetaInCheckpoints(t *testing.T) {
	dir := t.TempDir()
	meta := map[string]string{"plumb/chapter": "regression", "plumb/config": `{"inputs":2}`}
	for _, c := range []struct {
		name string
		meta map[string]string
		want map[string]string
	}{
		{"meta", meta, meta},
		{"none", nil, map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSetup(t, nil)
			cfg := s.config(regression{n: 32, size: 16, seed: 1}, 1)
			cfg.BestPath = filepath.Join(dir, c.name+"-best.safetensors")
			cfg.StatePath = filepath.Join(dir, c.name+"-state.safetensors")
			cfg.Meta = c.meta
			_, err := Run(cfg)
			require.NoError(t, err)
			for _, p := range []string{cfg.BestPath, cfg.StatePath} {
				got, err := checkpoint.Meta(p)
				require.NoError(t, err)
				require.Equal(t, c.want, got, p)
			}
		})
	}
}
