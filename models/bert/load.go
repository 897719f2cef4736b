package bert

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/tensor"
)

// LoadPretrained reads a directory written by transformers'
// BertModel.save_pretrained: config.json (ReadConfig) and
// model.safetensors (float32 tensors, read by checkpoint.Read, which
// validates the header against the file's size before it reads any
// tensor). Every parameter of the config's model must be in the file with
// its shape, and the file may hold no other tensor; names may carry the
// "bert." prefix that the task models (BertForSequenceClassification)
// give the encoder. The parameters are the file's tensors (the dense
// weights transposed to [in, out]), so nothing is allocated beyond what
// the file holds. rng draws dropout masks when the model trains; nil
// when it only runs inference.
func LoadPretrained(dir string, rng *rand.Rand) (*Model, error) {
	return loadDir(dir, "BertModel", rng, buildWithPooler)
}

// loadDir reads dir's config.json and model.safetensors and builds a
// model with make from the config and a paramSet whose weights are the
// file's; then it fills the biases and LayerNorm parameters make created
// from the file and checks that every parameter was found with its shape
// and that the file holds nothing else. A nil rng becomes a fixed source
// (inference never draws from it).
func loadDir[M any](dir, what string, rng *rand.Rand, make func(Config, *rand.Rand, *paramSet) (M, error)) (M, error) {
	var zero M
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return zero, err
	}
	path := filepath.Join(dir, "model.safetensors")
	file, _, err := checkpoint.Read(path)
	if err != nil {
		return zero, fmt.Errorf("bert: load %s: %w", what, err)
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	var errs []error
	used := map[string]bool{}
	take := func(name string, want tensor.Shape) (*tensor.Tensor, bool) {
		fname, t, ok := lookup(file, name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q is missing", name))
		case t.DType() != tensor.Float32 || !t.Shape().Equal(want):
			errs = append(errs, fmt.Errorf("tensor %q is %v%v, want float32%v", fname, t.DType(), t.Shape(), want))
		default:
			used[fname] = true
			return t, true
		}
		return nil, false
	}
	s := &paramSet{transposed: map[string]bool{}}
	s.weight = func(name string, transposed bool, shape ...int) *tensor.Tensor {
		want := tensor.Shape(shape)
		if transposed {
			want = tensor.Shape{shape[1], shape[0]}
		}
		t, ok := take(name, want)
		if !ok {
			return tensor.Zeros(tensor.Float32, 1) // never used: the errors end the load
		}
		if transposed {
			tt, err := t.Transpose(1, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("tensor %q: %w", name, err))
				return t
			}
			return tt
		}
		return t
	}
	m, err := make(cfg, rng, s)
	if err != nil {
		return zero, fmt.Errorf("bert: load %s from %s: %w", what, dir, err)
	}
	for _, p := range s.all { // the biases and LayerNorm parameters take the file's values
		if fname, _, ok := lookup(file, p.Name); ok && used[fname] {
			continue
		}
		if t, ok := take(p.Name, p.Value.Shape()); ok {
			p.Value = t
		}
	}
	var extra []string
	for name := range file {
		if !used[name] {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		errs = append(errs, fmt.Errorf("tensor %q in the file belongs to no parameter of %s", name, what))
	}
	if len(errs) > 0 {
		return zero, fmt.Errorf("bert: load %s from %s: %w", what, path, errors.Join(errs...))
	}
	return m, nil
}

// lookup finds a parameter's tensor in a file under its name or with the
// "bert." prefix of the task models' encoders.
func lookup(file map[string]*tensor.Tensor, name string) (string, *tensor.Tensor, bool) {
	if t, ok := file[name]; ok {
		return name, t, true
	}
	t, ok := file["bert."+name]
	return "bert." + name, t, ok
}
