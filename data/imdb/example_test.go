package imdb_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/imdb"
)

// Three reviews laid out as aclImdb, read, given a dictionary of the words
// seen at least twice, and encoded.
func Example() {
	dir, err := os.MkdirTemp("", "imdb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	reviews := map[string]string{
		"aclImdb/train/pos/0_9.txt": "A great, GREAT film.",
		"aclImdb/train/neg/1_2.txt": "A bad film, bad.",
		"aclImdb/test/pos/2_8.txt":  "Great!",
	}
	for name, text := range reviews {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	train, test, err := imdb.Load(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(train[0].Tokens, train[1].Tokens, train[1].Label == imdb.Negative)
	v, err := imdb.Vocab(2, train, test)
	if err != nil {
		panic(err)
	}
	ds, err := imdb.Dataset(train, v)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Words(), ds.Ragged("words").Values.Int64s(), ds.Ragged("words").Offsets, ds.Tensor("label").Int64s())
	// Output:
	// [a great great film] [a bad film bad] true
	// [great a bad film <unk>] [1 0 0 3 1 2 3 2] [0 4 8] [0 1]
}
