package recommender

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the recommender chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "recommender", Title: "the two-tower movie recommender", Folders: []string{"movielens"},
	Unit: "ratings", Epochs: 5, Batch: Batch, LR: LR,
	Inputs: "user ids, one a line → the top --k movies by predicted stars",
	New:    func() chapter.Chapter { return &Chapter{K: 10} },
}

// catalogKey is the metadata key of the users' and movies' features.
const catalogKey = "plumb/catalog"

// Chapter trains, evaluates and queries the recommender.
type Chapter struct {
	Config  Sizes
	K       int // movies a user
	catalog *Catalog
}

type model struct{ *Model }

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return m.BatchLoss(t, b) }

// Flags declares --k, the movies predict lists.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.IntVar(&c.K, "k", c.K, "predict: how many movies for each user")
}

// Train loads MovieLens and builds a fresh model for its dictionaries.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	d, err := Load(dir)
	if err != nil {
		return nil, err
	}
	c.Config, c.catalog = d.Sizes, d.Catalog
	m, err := New(d.Sizes, tensor.NewRNG(o.Seed))
	if err != nil {
		return nil, err
	}
	trainSet, err := chapter.Limit(d.Train, "--limit", o.Limit, o.Seed, log)
	if err != nil {
		return nil, err
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed))
	if err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: model{m}, Train: loader, Evaluate: m.Evaluator(d.Test, 1000), Monitor: "mse", HostFields: HostFields,
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := NewOptimizer(m, o.LR)
			return opt, nil, err
		},
		Describe: fmt.Sprintf("training recommender on %d ratings, testing on %d (%d users, %d movies; SGD lr %g, batch %d, seed %d)",
			trainSet.Len(), d.Test.Len(), d.Sizes.Users-1, d.Sizes.Movies-1, o.LR, o.Batch, o.Seed),
		Record: map[string]any{"batch": o.Batch, "lr": o.LR, "seed": o.Seed, "optimizer": "sgd",
			"train_size": trainSet.Len(), "test_size": d.Test.Len()},
	}, nil
}

// Restore rebuilds the model and the catalog from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	c.catalog = &Catalog{}
	if err := json.Unmarshal([]byte(meta[catalogKey]), c.catalog); err != nil {
		return nil, fmt.Errorf("recommender: the checkpoint's catalog (%q): %w", catalogKey, err)
	}
	m, err := New(c.Config, tensor.NewRNG(0))
	return model{m}, err
}

// Evaluate measures m's mean square error on the held-out ratings.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := Load(dir)
	if err != nil {
		return nil, "", err
	}
	if d.Sizes != c.Config {
		return nil, "", fmt.Errorf("recommender: this MovieLens has dictionaries %+v, the model %+v: not the data it was trained on", d.Sizes, c.Config)
	}
	test, err := chapter.Limit(d.Test, "--test-limit", o.TestLimit, o.Seed, log)
	if err != nil {
		return nil, "", err
	}
	return mm.Evaluator(test, 1000), fmt.Sprintf("%d held-out ratings", test.Len()), nil
}

// Predict prints, for each user id, the K movies with the highest
// predicted rating, in stars.
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(model)
	if c == nil || !ok || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	ids := make([]int, 0, len(c.catalog.Movies))
	for id := range c.catalog.Movies {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return chapter.Lines(in, func(line string) error {
		uid, err := strconv.Atoi(line)
		u, ok := c.catalog.Users[uid]
		if err != nil || !ok {
			fmt.Fprintf(out, "%s\t(not a user id of the training data)\n", line)
			return nil
		}
		stars, err := c.rank(mm.Model, uid, u, ids)
		if err != nil {
			return err
		}
		order := make([]int, len(ids))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return -cmpF(stars[a], stars[b]) })
		fmt.Fprintf(out, "user %d:", uid)
		for _, i := range order[:min(c.K, len(order))] {
			fmt.Fprintf(out, " %q %.2f;", c.catalog.Movies[ids[i]].Title, stars[i])
		}
		fmt.Fprintln(out)
		return nil
	})
}

// rank predicts user uid's rating of each movie of ids, in stars
// (inverting Target).
func (c *Chapter) rank(m *Model, uid int, u [3]int64, ids []int) ([]float32, error) {
	n := len(ids)
	col := func(v int64) *tensor.Tensor { return tensor.MustFromSlice(slices.Repeat([]int64{v}, n), n) }
	movie, genres, words := make([]int64, n), make([][]int64, n), make([][]int64, n)
	for i, id := range ids {
		mv := c.catalog.Movies[id]
		movie[i], genres[i], words[i] = int64(id), mv.Genres, mv.Words
	}
	in := Inputs{User: col(int64(uid)), Gender: col(u[0]), Age: col(u[1]), Job: col(u[2]), Movie: tensor.MustFromSlice(movie, n),
		Genres: data.SeqField("genres", genres).Ragged, Title: data.SeqField("title", words).Ragged}
	t := graph.NewEvalTape()
	defer t.Release()
	p, err := m.Predict(t, in).Host()
	if err != nil {
		return nil, err
	}
	stars := slices.Clone(p.Float32s())
	for i, v := range stars {
		stars[i] = (v + 5) / 2
	}
	return stars, nil
}

func cmpF(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Meta records the dictionary sizes and the catalog.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	cat, err := json.Marshal(c.catalog)
	if err != nil {
		return nil, err
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, map[string]string{catalogKey: string(cat)})
}
