package recommender

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/movielens"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// toyMovieLens makes 12 users and 10 movies whose ratings follow a hidden
// taste: users of even id like even movies (5 stars) and dislike odd ones
// (1 star), and the other way round.
func toyMovieLens() *movielens.Set {
	ml := &movielens.Set{Users: map[int]movielens.User{}, Movies: map[int]movielens.Movie{},
		Genres: []string{"a", "b", "c"}, Jobs: []string{"x", "y", "z"}}
	for u := 1; u <= 12; u++ {
		ml.Users[u] = movielens.User{ID: u, Female: u%3 == 0, Age: 20 + u, Group: u % 7, Job: u % 3}
	}
	titles := []string{"red river", "blue sky", "red sky", "green river", "blue night", "dark night", "red dawn", "blue dawn", "sky high", "river low"}
	for m := 1; m <= 10; m++ {
		ml.Movies[m] = movielens.Movie{ID: m, Title: titles[m-1], Genres: []int{m % 3, (m + 1) % 3}}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 600 {
		u, m := 1+rng.IntN(12), 1+rng.IntN(10)
		score := float32(1)
		if u%2 == m%2 {
			score = 5
		}
		ml.Ratings = append(ml.Ratings, movielens.Rating{User: u, Movie: m, Score: score})
	}
	return ml
}

func TestShapesAndSizes(t *testing.T) {
	d, err := FromMovieLens(toyMovieLens())
	require.NoError(t, err)
	require.Equal(t, Sizes{Users: 13, Genders: 2, Ages: 7, Jobs: 3, Movies: 11, Genres: 3, TitleWords: 11}, d.Sizes)
	require.Equal(t, 60, d.Test.Len())
	require.Equal(t, 540, d.Train.Len())
	m, err := New(d.Sizes, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Len(t, m.Params(), 5*3+1+1+2+2+2)

	loader, err := data.NewLoader(d.Test, 7)
	require.NoError(t, err)
	for b := range loader.Batches(0) {
		tape := graph.NewTape()
		u, v := m.Towers(tape, inputs(b))
		p, err := m.Predict(tape, inputs(b)).Tensor()
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{7, Combined}, u.Shape())
		require.Equal(t, tensor.Shape{7, Combined}, v.Shape())
		require.Equal(t, tensor.Shape{7}, p.Shape())
		for _, x := range p.Float32s() {
			require.LessOrEqual(t, math.Abs(float64(x)), Scale+1e-5)
		}
		require.ErrorContains(t, m.Loss(tape, Inputs{}, nil).Err(), "no scores")
		require.ErrorContains(t, m.Loss(tape, Inputs{}, targets(b)).Err(), `no "user" ids`)
		break
	}
	_, err = New(Sizes{}, tensor.NewRNG(1))
	require.ErrorContains(t, err, "must be positive")
	require.Equal(t, float32(-3), Target(1))
	require.Equal(t, float32(5), Target(5))
}

// The book's SGD learns the toy taste: the test error falls well below
// the error of predicting the mean.
func TestTrainingLearnsTaste(t *testing.T) {
	d, err := FromMovieLens(toyMovieLens())
	require.NoError(t, err)
	m, err := New(d.Sizes, tensor.NewRNG(2))
	require.NoError(t, err)
	before, err := m.MSE(d.Test, 64, nil)
	require.NoError(t, err)
	opt, err := NewOptimizer(m, LR)
	require.NoError(t, err)
	loader, err := data.NewLoader(d.Train, 32, data.Shuffle(1))
	require.NoError(t, err)
	res, err := train.Run(train.Config[*data.Batch]{Params: m.Params(), Optimizer: opt, Train: loader, Loss: m.BatchLoss,
		Epochs: 15, Evaluate: m.Evaluator(d.Test, 64), Monitor: "mse"})
	require.NoError(t, err)
	after := res.Epochs[len(res.Epochs)-1].Metrics["mse"]
	// Targets are -3 and 5 about equally often: predicting their mean 1
	// costs 16.
	require.Less(t, after, 4.0, "mse %v -> %v", before, after)
	require.InDelta(t, math.Sqrt(after)/2, res.Epochs[len(res.Epochs)-1].Metrics["rmse_stars"], 1e-12)
}

// A model not built by New reports that, naming the function, instead of
// panicking on its missing layers.
func TestUnbuiltModel(t *testing.T) {
	tape := graph.NewTape()
	for _, m := range []*Model{nil, {}} {
		require.Nil(t, m.Params())
		_, err := NewOptimizer(m, 0.1)
		require.ErrorContains(t, err, "recommender: NewOptimizer: a nil model or one not built by New")
		require.ErrorContains(t, m.Loss(tape, Inputs{}, tensor.Zeros(tensor.Float32, 1)).Err(), "recommender: Model.Towers: a nil model")
	}
}
