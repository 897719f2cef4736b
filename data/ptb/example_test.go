package ptb_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/ptb"
)

// A two-sentence corpus written as ptb.train.txt (with empty validation
// and test files), read, given a dictionary, and cut into trigrams.
func Example() {
	dir, err := os.MkdirTemp("", "ptb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"ptb.train.txt": " the cat sat \n the dog <unk> \n",
		"ptb.valid.txt": "",
		"ptb.test.txt":  "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	train, _, _, err := ptb.Load(dir)
	if err != nil {
		panic(err)
	}
	v, err := ptb.Vocab(2, train)
	if err != nil {
		panic(err)
	}
	ds, err := ptb.NGramDataset(train[:1], v, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(train, v.Words())
	fmt.Println(ds.Tensor("context").Int64s(), ds.Tensor("next").Int64s())
	// Output:
	// [[the cat sat] [the dog <unk>]] [<e> <s> the <unk>]
	// [1 2 2 3 3 3] [3 3 0]
}
