package conll05_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/conll05"
)

// One sentence with one predicate, written as a CoNLL-05 test set's words
// and props files and read as IOB-tagged examples.
func Example() {
	dir, err := os.MkdirTemp("", "conll05")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"test.wsj/words/test.wsj.words": "Prices\nfall\nsharply\ntoday\n\n",
		"test.wsj/props/test.wsj.props": "-     (A1*)\nfall  (V*)\n-     (AM-MNR*)\n-     (AM-TMP*)\n\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	exs, err := conll05.Load(dir, "test.wsj")
	if err != nil {
		panic(err)
	}
	for _, ex := range exs {
		fmt.Println(ex.Predicate, ex.Words, ex.Labels)
	}
	// Output: fall [Prices fall sharply today] [B-A1 B-V B-AM-MNR B-AM-TMP]
}
