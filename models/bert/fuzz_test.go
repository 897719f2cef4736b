package bert

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadConfig reads arbitrary config.json files: no panic, and a config
// it accepts validates and stays within the parameter bound.
func FuzzReadConfig(f *testing.F) {
	b, err := os.ReadFile("testdata/tiny/config.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"vocab_size": 1e30, "hidden_size": 8}`))
	f.Add([]byte(`{"vocab_size": 5, "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 3, "max_position_embeddings": 2, "type_vocab_size": 1, "hidden_act": "relu", "layer_norm_eps": 1e-5, "id2label": {"0": "x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadConfig(path)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ReadConfig accepted an invalid config: %v", err)
		}
		if c.paramCount() > maxParams || c.NumLabels() < 1 {
			t.Fatalf("accepted %v parameters, %d labels", c.paramCount(), c.NumLabels())
		}
	})
}
