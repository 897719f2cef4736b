// Package recommender is the PaddlePaddle book's chapter 5 ("Recommender
// System"): a user tower and a movie tower, each ending in an fc layer of
// 200 tanh units, whose cosine similarity, scaled by 5, predicts a
// MovieLens rating. The user tower embeds id, gender, age group and
// occupation, each through an fc layer; the movie tower embeds the id
// (through an fc layer), the genres (embeddings summed) and the title
// (a sequence convolution of window 3 with tanh, summed over the words).
package recommender

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Sizes of the dictionaries the model embeds, each the largest id + 1.
type Sizes struct {
	Users, Genders, Ages, Jobs, Movies, Genres, TitleWords int
}

// The book's widths (05.recommender_system/train.py) and output scale.
const (
	IDEmbed    = 32  // user and movie id embeddings and their fc layers
	AttrEmbed  = 16  // gender, age and job embeddings and their fc layers
	MovieEmbed = 32  // genre and title word embeddings, title filters
	Combined   = 200 // each tower's last fc, tanh
	Scale      = 5.0 // the cosine similarity's scale
	Window     = 3   // the title convolution's window
)

// feature is one embedded input through its own fc layer (no activation,
// Fluid's default).
type feature struct {
	field string
	emb   *layers.Embedding
	fc    *layers.Linear
}

// Params returns the embedding's and the fc layer's parameters.
func (f feature) Params() []*graph.Param { return layers.Params(f.emb, f.fc) }

// Model is the two-tower recommender.
type Model struct {
	user      []feature // user, gender, age, job
	movie     feature   // movie id
	genres    *layers.Embedding
	title     *layers.Embedding
	titleConv *layers.SequenceConv
	userFC    *layers.Linear // [32+16+16+16, 200], tanh
	movieFC   *layers.Linear // [32+32+32, 200], tanh
}

// New returns the model for dictionaries of the given sizes.
func New(s Sizes, rng *rand.Rand, opts ...layers.Option) (*Model, error) {
	for _, n := range []int{s.Users, s.Genders, s.Ages, s.Jobs, s.Movies, s.Genres, s.TitleWords} {
		if n < 1 {
			return nil, fmt.Errorf("recommender: dictionary sizes %+v must be positive", s)
		}
	}
	newFeature := func(field string, vocab, dim int) (feature, error) {
		emb, err := layers.NewEmbedding("rec/"+field+"_emb", layers.EmbeddingConfig{Vocab: vocab, Dim: dim}, rng, opts...)
		if err != nil {
			return feature{}, err
		}
		fc, err := layers.NewLinear("rec/"+field+"_fc", dim, dim, rng, opts...)
		return feature{field, emb, fc}, err
	}
	m := &Model{}
	for _, f := range []struct {
		field      string
		vocab, dim int
	}{{"user", s.Users, IDEmbed}, {"gender", s.Genders, AttrEmbed}, {"age", s.Ages, AttrEmbed}, {"job", s.Jobs, AttrEmbed}} {
		ft, err := newFeature(f.field, f.vocab, f.dim)
		if err != nil {
			return nil, err
		}
		m.user = append(m.user, ft)
	}
	var err error
	if m.movie, err = newFeature("movie", s.Movies, IDEmbed); err != nil {
		return nil, err
	}
	if m.genres, err = layers.NewEmbedding("rec/genre_emb", layers.EmbeddingConfig{Vocab: s.Genres, Dim: MovieEmbed}, rng, opts...); err != nil {
		return nil, err
	}
	if m.title, err = layers.NewEmbedding("rec/title_emb", layers.EmbeddingConfig{Vocab: s.TitleWords, Dim: MovieEmbed}, rng, opts...); err != nil {
		return nil, err
	}
	if m.titleConv, err = layers.NewSequenceConv("rec/title_conv", layers.SequenceConvConfig{In: MovieEmbed, Out: MovieEmbed, ContextStart: -(Window / 2), ContextLength: Window}, rng, opts...); err != nil {
		return nil, err
	}
	if m.userFC, err = layers.NewLinear("rec/user_combined", IDEmbed+3*AttrEmbed, Combined, rng, opts...); err != nil {
		return nil, err
	}
	if m.movieFC, err = layers.NewLinear("rec/movie_combined", 3*MovieEmbed, Combined, rng, opts...); err != nil {
		return nil, err
	}
	return m, nil
}

// built reports whether m was made by New: every layer in place.
func (m *Model) built() bool {
	return m != nil && len(m.user) == 4 && m.movie.emb != nil && m.genres != nil && m.title != nil &&
		m.titleConv != nil && m.userFC != nil && m.movieFC != nil
}

func errNotBuilt(method string) error {
	return fmt.Errorf("recommender: %s: a nil model or one not built by New", method)
}

// Params returns every parameter; nil for a model not built by New.
func (m *Model) Params() []*graph.Param {
	if !m.built() {
		return nil
	}
	return layers.Params(layers.List(m.user), m.movie, m.genres, m.title, m.titleConv, m.userFC, m.movieFC)
}

// Inputs are one batch's features: int64 ids [B] for the dense fields,
// ragged int64 ids for genres and title.
type Inputs struct {
	User, Gender, Age, Job, Movie *tensor.Tensor
	Genres, Title                 *tensor.Ragged
}

func (f feature) forward(t *graph.Tape, ids *tensor.Tensor) *graph.Value {
	if ids == nil {
		return t.Fail(fmt.Errorf("recommender: no %q ids in the batch", f.field))
	}
	return f.fc.Forward(f.emb.Lookup(t, ids))
}

// lookup embeds a ragged batch of ids, keeping its offsets.
func lookup(t *graph.Tape, table *layers.Embedding, ids *tensor.Ragged, field string) graph.Seq {
	if ids == nil {
		return graph.Seq{Values: t.Fail(fmt.Errorf("recommender: no %q ids in the batch", field))}
	}
	return graph.NewSeq(graph.Embedding(t.Param(table.Table), ids.Values, ops.NoPadding), ids.Offsets)
}

// Towers returns the user and movie features [B, 200].
func (m *Model) Towers(t *graph.Tape, in Inputs) (user, movie *graph.Value) {
	if !m.built() {
		failed := t.Fail(errNotBuilt("Model.Towers"))
		return failed, failed
	}
	us := make([]*graph.Value, len(m.user))
	for i, ids := range []*tensor.Tensor{in.User, in.Gender, in.Age, in.Job} {
		us[i] = m.user[i].forward(t, ids)
	}
	user = graph.Tanh(m.userFC.Forward(graph.Concat(1, us...)))

	genres := graph.SequencePool(lookup(t, m.genres, in.Genres, "genres"), ops.SequencePoolSum, 0)
	conv := m.titleConv.Forward(lookup(t, m.title, in.Title, "title"))
	title := graph.SequencePool(conv.With(graph.Tanh(conv.Values)), ops.SequencePoolSum, 0)
	movie = graph.Tanh(m.movieFC.Forward(graph.Concat(1, m.movie.forward(t, in.Movie), genres, title)))
	return user, movie
}

// Predict returns Scale × the cosine similarity of the towers, [B]
// (Fluid's cos_sim, x·y / (|x|·|y|), then scale).
func (m *Model) Predict(t *graph.Tape, in Inputs) *graph.Value {
	u, v := m.Towers(t, in)
	dot := graph.Sum(graph.Mul(u, v), 1)
	norms := graph.Sqrt(graph.Mul(graph.Sum(graph.Mul(u, u), 1), graph.Sum(graph.Mul(v, v), 1)))
	scale, err := tensor.Full(u.DType(), Scale)
	if err != nil { // u failed: its error flows on
		return u
	}
	if scale, err = t.Move(scale, graph.DeviceOf(m.Params())); err != nil {
		return t.Fail(err)
	}
	return graph.Mul(graph.Div(dot, norms), t.Const(scale))
}

// Loss is the mean square error of Predict against targets [B] (Fluid's
// square_error_cost, then mean). The inputs are where the model's
// parameters are (the trainer moves a batch there, train.Config.Device);
// the targets, which BatchLoss computes on the host from the scores, go
// there for the step.
func (m *Model) Loss(t *graph.Tape, in Inputs, targets *tensor.Tensor) *graph.Value {
	if targets == nil {
		return t.Fail(fmt.Errorf("recommender: no scores in the batch"))
	}
	targets, err := t.Move(targets, graph.DeviceOf(m.Params()))
	if err != nil {
		return t.Fail(err)
	}
	return graph.MSE(m.Predict(t, in), t.Const(targets))
}
