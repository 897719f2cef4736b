package recommender_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/recommender"
	"github.com/plumbml/plumb/tensor"
)

// The two-tower recommender scores (user, movie) pairs: here one user and
// two movies, each with its genres and title words as ragged id lists.
func ExampleModel_Predict() {
	sizes := recommender.Sizes{Users: 10, Genders: 2, Ages: 7, Jobs: 5, Movies: 20, Genres: 4, TitleWords: 30}
	m, err := recommender.New(sizes, tensor.NewRNG(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := func(v ...int64) *tensor.Tensor { return tensor.MustFromSlice(v, len(v)) }
	genres, _ := tensor.NewRagged(ids(1, 3, 2), []int{0, 2, 3})        // movie 7: genres 1 and 3; movie 12: genre 2
	title, _ := tensor.NewRagged(ids(5, 9, 17, 4, 11), []int{0, 2, 5}) // two and three title words
	in := recommender.Inputs{
		User: ids(3, 3), Gender: ids(1, 1), Age: ids(2, 2), Job: ids(4, 4),
		Movie: ids(7, 12), Genres: genres, Title: title,
	}
	scores, err := m.Predict(graph.NewEvalTape(), in).Tensor()
	if err != nil {
		fmt.Println(err)
		return
	}
	inRange := true // a scaled cosine similarity
	for _, s := range scores.Float32s() {
		inRange = inRange && s >= -recommender.Scale && s <= recommender.Scale
	}
	fmt.Println("scores", scores.Shape(), "within ±Scale:", inRange)
	// Output: scores [2] within ±Scale: true
}
