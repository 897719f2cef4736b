package parallel_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/parallel"
)

// Two aligned sentences written as train.en and train.de, read as pairs,
// given dictionaries and encoded for a translation model.
func Example() {
	dir, err := os.MkdirTemp("", "parallel")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	en, de := filepath.Join(dir, "train.en"), filepath.Join(dir, "train.de")
	if err := os.WriteFile(en, []byte("a dog runs\na cat\n"), 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile(de, []byte("ein Hund rennt\neine Katze\n"), 0o644); err != nil {
		panic(err)
	}
	pairs, err := parallel.Load(en, de, nil)
	if err != nil {
		panic(err)
	}
	src, err := parallel.Vocab(pairs, false, 0, 1)
	if err != nil {
		panic(err)
	}
	trg, err := parallel.Vocab(pairs, true, 0, 1)
	if err != nil {
		panic(err)
	}
	ds, err := parallel.Dataset(pairs, src, trg, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(pairs[1].Src, pairs[1].Trg, src.Words())
	fmt.Println(ds.Ragged("src").Values.Int64s(), ds.Ragged("trg_next").Offsets)
	// Output:
	// [a cat] [eine Katze] [<s> <e> <unk> a cat dog runs]
	// [0 3 5 6 1 0 3 4 1] [0 4 7]
}
