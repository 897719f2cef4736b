package export_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/recommender"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/srl"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/models/word2vec"
	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/onnx/export"
	"github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// bookModel is one of the book's models as a forward pass on a batch of
// the given size (for a text model, sequences of lengths that depend on
// the batch and seed), with the inputs Plumb takes and the ONNX model's.
type bookModel struct {
	name string
	// batch returns the forward pass, its example inputs, the Export
	// options and the ONNX inputs of the same batch.
	batch func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor)
	// raggedOut: the output is the rows of the first input's ragged batch,
	// which the file gives padded.
	raggedOut bool
	// runErr, when set, is onnx/run's compile error for the file (an
	// importer limitation); ONNX Runtime checks it instead.
	runErr string
}

func randImages(t *testing.T, seed uint64, shape ...int) *tensor.Tensor {
	x, err := tensor.RandUniform(tensor.NewRNG(seed), tensor.Float32, -1, 1, shape...)
	require.NoError(t, err)
	return x
}

func imageModel(name string, forward func(*graph.Value) *graph.Value, shape ...int) bookModel {
	return bookModel{name: name, batch: func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
		x := randImages(t, seed, append([]int{n}, shape...)...)
		f := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return forward(tape.Const(in[0])) }
		return f, []*tensor.Tensor{x}, export.Options{Inputs: []export.Input{{Name: "images"}}, Output: "logits"}, map[string]*tensor.Tensor{"images": x}
	}}
}

// padded returns ids split by offsets as [len(offsets)-1, longest], each
// sequence from column 0 and fill after its end, and the lengths.
func padded(ids *tensor.Tensor, offsets []int, fill int64) (*tensor.Tensor, *tensor.Tensor) {
	b := len(offsets) - 1
	longest := 1
	for q := range b {
		longest = max(longest, offsets[q+1]-offsets[q])
	}
	p := tensor.Zeros(tensor.Int64, b, longest)
	p.Fill(float64(fill))
	l := tensor.Zeros(tensor.Int64, b)
	for q := range b {
		l.Int64s()[q] = int64(offsets[q+1] - offsets[q])
		copy(p.Int64s()[q*longest:], ids.Int64s()[offsets[q]:offsets[q+1]])
	}
	return p, l
}

func textModel(name string, logits func(*graph.Tape, *tensor.Ragged) *graph.Value, vocab int) bookModel {
	return bookModel{name: name, batch: func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
		rng := tensor.NewRNG(seed)
		off := []int{0}
		for range n {
			off = append(off, off[len(off)-1]+1+rng.IntN(12))
		}
		ids := tensor.Zeros(tensor.Int64, off[n])
		for i := range ids.Int64s() {
			ids.Int64s()[i] = int64(rng.IntN(vocab))
		}
		f := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
		}
		p, l := padded(ids, off, 3)
		return f, []*tensor.Tensor{ids}, export.Options{Inputs: []export.Input{{Name: "words", Offsets: off}}, Output: "logits"},
			map[string]*tensor.Tensor{"words": p, "words_lengths": l}
	}}
}

// bookModels are the five models of the export bar (the MNIST MLP and
// CNN, ResNet-32, the sentiment text CNN and stacked LSTM), the
// translation encoder's initial decoder state, the word2vec N-gram
// model's logits, the recommender's score (five id inputs and two ragged
// ones) and the SRL model's emissions (eight ragged features of the same
// sentences; a ragged output, which the file gives padded).
func bookModels(t *testing.T) []bookModel {
	var ms []bookModel
	for _, name := range []string{"mlp", "cnn"} {
		m, err := mnist.New(name, tensor.NewRNG(1))
		require.NoError(t, err)
		ms = append(ms, imageModel("mnist_"+name, m.Forward, 1, 28, 28))
	}
	r, err := cifar.New("resnet32", tensor.NewRNG(2))
	require.NoError(t, err)
	ms = append(ms, imageModel("resnet32", r.Forward, 3, 32, 32))
	if os.Getenv("PLUMB_ONNX_EXPORT_DIR") != "" {
		// The CIFAR VGG too, for the ONNX Runtime check: 61 MB and about
		// 0.3 GFLOP an image, too big for CI.
		v, err := cifar.New("vgg", tensor.NewRNG(2))
		require.NoError(t, err)
		ms = append(ms, imageModel("vgg", v.Forward, 3, 32, 32))
	}
	const vocab = 300
	for _, name := range []string{"cnn", "lstm"} {
		m, err := sentiment.New(name, vocab, tensor.NewRNG(3))
		require.NoError(t, err)
		ms = append(ms, textModel("text_"+name, m.Logits, vocab))
	}
	tr, err := translate.New(translate.Sizes{Src: vocab, Trg: vocab, Emb: 32, Hidden: 32, Attention: 32}, tensor.NewRNG(4))
	require.NoError(t, err)
	ms = append(ms, textModel("translate_encoder", func(tape *graph.Tape, r *tensor.Ragged) *graph.Value {
		return tr.Encode(tape, r).H // the decoder's initial state, from the bidirectional GRU's final states
	}, vocab))
	srlModel, err := srl.New(srl.Sizes{Words: 50, Verbs: 10, Labels: 9, WordDim: 8, MarkDim: 3, Hidden: 16, Depth: 3}, tensor.NewRNG(7))
	require.NoError(t, err)
	ms = append(ms, bookModel{name: "srl_emissions", batch: func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
		rng := tensor.NewRNG(seed)
		lengths := make([]int, n)
		for i := range lengths {
			lengths[i] = 1 + rng.IntN(7)
		}
		var fields []data.Field
		for _, f := range srl.Features {
			vocab := map[string]int{"verb": 10, "mark": 2}[f]
			if vocab == 0 {
				vocab = 50
			}
			seqs := make([][]int64, n)
			for i, l := range lengths {
				for range l {
					seqs[i] = append(seqs[i], int64(rng.IntN(vocab)))
				}
			}
			fields = append(fields, data.SeqField(f, seqs))
		}
		ds, err := data.NewDataset(fields...)
		require.NoError(t, err)
		loader, err := data.NewLoader(ds, n)
		require.NoError(t, err)
		var b *data.Batch
		for bb, err := range loader.Batches(0) {
			require.NoError(t, err)
			b = bb
			break
		}
		var ex []*tensor.Tensor
		var opts export.Options
		feeds := map[string]*tensor.Tensor{}
		for _, f := range srl.Features {
			r := b.Ragged(f)
			ex = append(ex, r.Values)
			opts.Inputs = append(opts.Inputs, export.Input{Name: f, Offsets: r.Offsets, Lengths: "lengths"})
			feeds[f], feeds["lengths"] = padded(r.Values, r.Offsets, 1)
		}
		opts.Output = "logits"
		f := func(tape *graph.Tape, _ []*tensor.Tensor) *graph.Value { return srlModel.Emissions(tape, b).Values }
		return f, ex, opts, feeds
	}, raggedOut: true, runErr: "activations [Sigmoid Relu Sigmoid] are not supported"}) // db_lstm's relu candidate and sigmoid cell
	w2v, err := word2vec.New(vocab, tensor.NewRNG(6))
	require.NoError(t, err)
	ms = append(ms, bookModel{name: "word2vec", batch: func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
		rng := tensor.NewRNG(seed)
		ctx := tensor.Zeros(tensor.Int64, n, word2vec.N-1)
		for i := range ctx.Int64s() {
			ctx.Int64s()[i] = int64(rng.IntN(vocab))
		}
		f := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return w2v.Logits(tape, in[0]) }
		return f, []*tensor.Tensor{ctx}, export.Options{Inputs: []export.Input{{Name: "context"}}, Output: "logits"}, map[string]*tensor.Tensor{"context": ctx}
	}})
	rec, err := recommender.New(recommender.Sizes{Users: 20, Genders: 2, Ages: 7, Jobs: 21, Movies: 30, Genres: 18, TitleWords: 50}, tensor.NewRNG(5))
	require.NoError(t, err)
	ms = append(ms, bookModel{name: "recommender", batch: func(t *testing.T, n int, seed uint64) (infer.Forward, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
		rng := tensor.NewRNG(seed)
		ids := func(vocab, size int) *tensor.Tensor {
			x := tensor.Zeros(tensor.Int64, size)
			for i := range x.Int64s() {
				x.Int64s()[i] = int64(rng.IntN(vocab))
			}
			return x
		}
		ragged := func(vocab, most int) *tensor.Ragged {
			off := []int{0}
			for range n {
				off = append(off, off[len(off)-1]+1+rng.IntN(most))
			}
			return &tensor.Ragged{Values: ids(vocab, off[n]), Offsets: off}
		}
		user, gender, age, job, movie := ids(20, n), ids(2, n), ids(7, n), ids(21, n), ids(30, n)
		genres, title := ragged(18, 3), ragged(50, 6)
		f := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return rec.Predict(tape, recommender.Inputs{User: in[0], Gender: in[1], Age: in[2], Job: in[3], Movie: in[4],
				Genres: &tensor.Ragged{Values: in[5], Offsets: genres.Offsets}, Title: &tensor.Ragged{Values: in[6], Offsets: title.Offsets}})
		}
		opts := export.Options{Output: "logits", Inputs: []export.Input{{Name: "user"}, {Name: "gender"}, {Name: "age"}, {Name: "job"}, {Name: "movie"},
			{Name: "genres", Offsets: genres.Offsets}, {Name: "title", Offsets: title.Offsets}}}
		gp, gl := padded(genres.Values, genres.Offsets, 1)
		tp, tl := padded(title.Values, title.Offsets, 1)
		feeds := map[string]*tensor.Tensor{"user": user, "gender": gender, "age": age, "job": job, "movie": movie,
			"genres": gp, "genres_lengths": gl, "title": tp, "title_lengths": tl}
		return f, []*tensor.Tensor{user, gender, age, job, movie, genres.Values, title.Values}, opts, feeds
	}})
	return ms
}

// randomizeBatchNorm gives every batch norm the forward pass applies
// moving statistics other than a fresh layer's 0 and 1 (and a scale and
// shift other than 1 and 0), so the export of inference batch norm is
// tested on statistics that change the result.
func randomizeBatchNorm(t *testing.T, forward infer.Forward, example []*tensor.Tensor) {
	rng := tensor.NewRNG(9)
	tape := graph.NewEvalTape()
	seen := map[*tensor.Tensor]bool{}
	tape.SetTrace(func(op ops.Op, in []*tensor.Tensor, _ *tensor.Tensor) {
		if op.Name() != "batch_norm" {
			return
		}
		for i, p := range in[1:] {
			if seen[p] {
				continue
			}
			seen[p] = true
			for j := range p.Size() {
				v := 0.5 * rng.NormFloat64()
				if i == 0 || i == 3 { // gamma, variance: positive
					v = 0.5 + rng.Float64()
				}
				p.SetAt(j, v)
			}
		}
	})
	_, err := forward(tape, example).Tensor()
	require.NoError(t, err)
}

// maxAbsDiff returns the largest |a - b| over two tensors of one shape.
func maxAbsDiff(t *testing.T, a, b *tensor.Tensor) float64 {
	require.Equal(t, a.Shape(), b.Shape())
	d := 0.0
	for i := range a.Size() {
		d = max(d, math.Abs(a.At(i)-b.At(i)))
	}
	return d
}

// Each book model, traced at batch 2 and exported, read back by onnx.Decode
// and run by onnx/run at batch 1, 2 and 5 (the batch, and for the text
// models the sequence length, are symbolic), gives Plumb's own eval
// outputs within 1e-5; the SRL model's LSTMs have activations onnx/run
// does not run yet, so its file is checked in ONNX Runtime only.
func TestBookModelsRoundTrip(t *testing.T) {
	for _, bm := range bookModels(t) {
		t.Run(bm.name, func(t *testing.T) {
			f, ex, opts, _ := bm.batch(t, 2, 1)
			randomizeBatchNorm(t, f, ex)
			var buf bytes.Buffer
			require.NoError(t, export.Export(&buf, f, ex, opts))
			m, err := onnx.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), onnx.Options{})
			require.NoError(t, err)
			require.Equal(t, int64(export.Opset), m.Opset)
			require.Equal(t, int64(export.IRVersion), m.IRVersion)
			for _, in := range m.Graph.Inputs {
				require.Equal(t, "batch", in.Shape[0].Param, "input %s", in.Name)
			}
			require.Equal(t, "batch", m.Graph.Outputs[0].Shape[0].Param)
			c, err := run.Compile(m)
			if bm.runErr != "" {
				// onnx/run does not run this file; ONNX Runtime does
				// (bench/onnx_export_check.py).
				require.ErrorContains(t, err, bm.runErr)
			} else {
				require.NoError(t, err)
			}
			var cases []map[string]any
			for _, n := range []int{1, 2, 5} {
				f, ex, opts, feeds := bm.batch(t, n, uint64(10+n))
				want, err := f(graph.NewEvalTape(), ex).Tensor()
				require.NoError(t, err)
				if bm.raggedOut { // the file gives the rows padded
					want, _ = padRows(want, opts.Inputs[0].Offsets, 0)
				}
				cases = append(cases, map[string]any{"inputs": tensorsJSON(feeds), "want": tensorJSON(want)})
				if bm.runErr != "" {
					continue
				}
				out, err := c.Run(feeds)
				require.NoError(t, err)
				got := out["logits"]
				d := maxAbsDiff(t, want, got)
				require.LessOrEqual(t, d, 1e-5, "batch %d: max |Plumb - onnx/run|", n)
				t.Logf("batch %d: max |Plumb - onnx/run| = %.3g", n, d)
			}
			saveForORT(t, bm.name, buf.Bytes(), cases)
		})
	}
}

// saveForORT writes an exported model and its cases (the ONNX inputs and
// Plumb's output per batch) into $PLUMB_ONNX_EXPORT_DIR, when it is set,
// for bench/onnx_export_check.py to run in ONNX Runtime.
func saveForORT(t *testing.T, name string, model []byte, cases []map[string]any) {
	dir := os.Getenv("PLUMB_ONNX_EXPORT_DIR")
	if dir == "" {
		return
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".onnx"), model, 0o644))
	b, err := json.Marshal(map[string]any{"model": name + ".onnx", "cases": cases})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644))
}

// tensorJSON is a tensor as {"dtype", "shape", "values"} for the ONNX
// Runtime check script.
func tensorJSON(x *tensor.Tensor) map[string]any {
	vals := make([]float64, x.Size())
	for i := range vals {
		vals[i] = x.At(i)
	}
	if x.DType() == tensor.Int64 {
		iv := make([]int64, x.Size())
		copy(iv, x.Int64s())
		return map[string]any{"dtype": "int64", "shape": []int(x.Shape()), "values": iv}
	}
	return map[string]any{"dtype": x.DType().String(), "shape": []int(x.Shape()), "values": vals}
}

func tensorsJSON(m map[string]*tensor.Tensor) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = tensorJSON(v)
	}
	return out
}
