package movielens_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/movielens"
)

// Two users, two movies and three ratings laid out as ml-100k, read, and
// turned into a dataset with the titles encoded.
func Example() {
	dir, err := os.MkdirTemp("", "movielens")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"u.data":       "1\t2\t5\t881250949\n2\t1\t3\t891717742\n1\t1\t4\t878887116\n",
		"u.user":       "1|24|M|technician|85711\n2|53|F|other|94043\n",
		"u.item":       "1|Toy Story (1995)|01-Jan-1995||http://x|0|0|1\n2|Heat (1995)|||http://y|1|0|0\n",
		"u.genre":      "unknown|0\nAction|1\nComedy|2\n",
		"u.occupation": "other\ntechnician\n",
	}
	if err := os.Mkdir(filepath.Join(dir, "ml-100k"), 0o755); err != nil {
		panic(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "ml-100k", name), []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	ml, err := movielens.Load100K(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(ml.Ratings), ml.Movies[1].Title, ml.Users[2].Female, ml.Genres)
	titles, err := movielens.TitleVocab(ml)
	if err != nil {
		panic(err)
	}
	ds, err := ml.Dataset(titles)
	if err != nil {
		panic(err)
	}
	fmt.Println(ds.Tensor("user").Int64s(), ds.Tensor("movie").Int64s(), ds.Tensor("score").Float32s())
	// Output:
	// 3 Toy Story true [unknown Action Comedy]
	// [1 2 1] [2 1 1] [5 3 4]
}
