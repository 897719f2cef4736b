package recommender

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/movielens"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// The book's recipe: SGD at 0.2, batch 256; and the held-out share:
// every TestEvery-th rating in file order (10%), a split that the Keras and
// PyTorch scripts in bench/ reproduce exactly.
const (
	LR        = 0.2
	Batch     = 256
	TestEvery = 10
)

// Data is the chapter's data: the ratings as movielens.Set.Dataset lays
// them out, split once into train and test, and the dictionary sizes.
type Data struct {
	Sizes       Sizes
	Train, Test *data.Dataset
	Catalog     *Catalog
}

// Catalog is every user's and every movie's features by id, as the model
// takes them: what ranking the movies for a user needs besides the model.
type Catalog struct {
	Users  map[int][3]int64 `json:"users"` // gender (1: female), age group, job
	Movies map[int]Movie    `json:"movies"`
}

// Movie is one movie's features and title.
type Movie struct {
	Title  string  `json:"title"`
	Genres []int64 `json:"genres"`
	Words  []int64 `json:"words"` // the title's word ids
}

// Load reads MovieLens from src: 1M when the folder or archive holds it
// (ratings.dat), else 100K (see movielens.Load1M and 100K).
func Load(src string) (*Data, error) {
	ml, err := movielens.Load1M(src)
	if err != nil {
		var err100k error
		if ml, err100k = movielens.Load100K(src); err100k != nil {
			return nil, fmt.Errorf("recommender: neither MovieLens 1M (%v) nor 100K (%w)", err, err100k)
		}
	}
	return FromMovieLens(ml)
}

// FromMovieLens builds the dataset with a title dictionary of ml's movies
// and holds out ratings TestEvery-1, 2·TestEvery-1, ... (in file order) as
// the test set.
func FromMovieLens(ml *movielens.Set) (*Data, error) {
	titles, err := movielens.TitleVocab(ml)
	if err != nil {
		return nil, fmt.Errorf("recommender: %w", err)
	}
	ds, err := ml.Dataset(titles)
	if err != nil {
		return nil, fmt.Errorf("recommender: %w", err)
	}
	s := Sizes{Genders: 2, Ages: 7, Jobs: len(ml.Jobs), Genres: len(ml.Genres), TitleWords: titles.Len()}
	for id, u := range ml.Users {
		s.Users, s.Jobs = max(s.Users, id+1), max(s.Jobs, u.Job+1)
	}
	for id := range ml.Movies {
		s.Movies = max(s.Movies, id+1)
	}
	var trainIdx, testIdx []int
	for i := range ds.Len() {
		if i%TestEvery == TestEvery-1 {
			testIdx = append(testIdx, i)
		} else {
			trainIdx = append(trainIdx, i)
		}
	}
	d := &Data{Sizes: s, Catalog: &Catalog{Users: map[int][3]int64{}, Movies: map[int]Movie{}}}
	for id, u := range ml.Users {
		g := int64(0)
		if u.Female {
			g = 1
		}
		d.Catalog.Users[id] = [3]int64{g, int64(u.Group), int64(u.Job)}
	}
	for id, m := range ml.Movies {
		words, err := titles.Encode(movielens.TitleWords(m.Title))
		if err != nil {
			return nil, fmt.Errorf("recommender: movie %d: %w", id, err)
		}
		mv := Movie{Title: m.Title, Words: words, Genres: []int64{}}
		for _, g := range m.Genres {
			mv.Genres = append(mv.Genres, int64(g))
		}
		d.Catalog.Movies[id] = mv
	}
	if d.Train, err = ds.Subset(trainIdx); err != nil {
		return nil, fmt.Errorf("recommender: %w", err)
	}
	if d.Test, err = ds.Subset(testIdx); err != nil {
		return nil, fmt.Errorf("recommender: %w", err)
	}
	return d, nil
}

// inputs picks a batch's fields.
func inputs(b *data.Batch) Inputs {
	return Inputs{User: b.Tensor("user"), Gender: b.Tensor("gender"), Age: b.Tensor("age"), Job: b.Tensor("job"),
		Movie: b.Tensor("movie"), Genres: b.Ragged("genres"), Title: b.Ragged("title")}
}

// Target is the book's regression target for a 1..5 star score: Paddle's
// movielens reader feeds score·2 - 5 (so -3..5, inside the ±5 that the
// scaled cosine reaches). An error of e in target units is e/2 stars.
func Target(stars float32) float32 { return stars*2 - 5 }

// targets maps a batch's "score" field [B] to Target, nil when it has none.
func targets(b *data.Batch) *tensor.Tensor {
	s := b.Tensor("score")
	if s == nil || s.DType() != tensor.Float32 {
		return nil
	}
	out := make([]float32, s.Size())
	for i, v := range s.Float32s() {
		out[i] = Target(v)
	}
	return tensor.MustFromSlice(out, s.Shape()...)
}

// HostFields are the batch fields BatchLoss reads on the host (the
// scores, which it maps to targets); the trainer moves the others to the
// model's device (train.Config.HostFields).
var HostFields = []string{"score"}

// BatchLoss is the trainer's loss: the batch's mean square error in
// target units.
func (m *Model) BatchLoss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	return m.Loss(t, inputs(b), targets(b)), b.Len()
}

// MSE is m's mean square error over ds in target units (the book's test
// cost), in inference mode, batch ratings at a time; report, if not nil,
// gets the ratings done.
func (m *Model) MSE(ds *data.Dataset, batch int, report func(done, total int)) (float64, error) {
	if ds == nil || ds.Len() == 0 {
		return 0, fmt.Errorf("recommender: MSE of an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, err
	}
	return train.MeanLossOn(graph.DeviceOf(m.Params()), loader, m.BatchLoss, report, HostFields...)
}

// Evaluator is the trainer's evaluation on ds: "mse" in target units and
// "rmse_stars", the root mean square error in stars (√mse / 2).
func (m *Model) Evaluator(ds *data.Dataset, batch int) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		mse, err := m.MSE(ds, batch, report)
		if err != nil {
			return nil, err
		}
		return train.Metrics{"mse": mse, "rmse_stars": math.Sqrt(mse) / 2}, nil
	}
}

// NewOptimizer returns the book's optimizer: plain SGD at lr.
func NewOptimizer(m *Model, lr float64) (optim.Optimizer, error) {
	if !m.built() {
		return nil, errNotBuilt("NewOptimizer")
	}
	return optim.NewSGD(m.Params(), optim.LR(lr))
}
