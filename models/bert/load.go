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
// "bert." prefix that BertForMaskedLM and BertForSequenceClassification
// give the encoder. The parameters are the file's tensors (the dense
// weights transposed to [in, out]), so nothing is allocated beyond what
// the file holds. rng draws dropout masks when the model trains; nil
// when it only runs inference.
func LoadPretrained(dir string, rng *rand.Rand) (*Model, error) {
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "model.safetensors")
	file, _, err := checkpoint.Read(path)
	if err != nil {
		return nil, fmt.Errorf("bert: LoadPretrained: %w", err)
	}
	if rng == nil { // the dropout layers need a source to exist; inference never draws from it
		rng = rand.New(rand.NewPCG(0, 0))
	}
	var errs []error
	used := map[string]bool{}
	m, err := build(cfg, rng, func(name string, transposed bool, shape ...int) *tensor.Tensor {
		fname, t, ok := lookup(file, name)
		want := tensor.Shape(shape)
		if transposed {
			want = tensor.Shape{shape[1], shape[0]}
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q is missing", name))
		case t.DType() != tensor.Float32 || !t.Shape().Equal(want):
			errs = append(errs, fmt.Errorf("tensor %q is %v%v, want float32%v", fname, t.DType(), t.Shape(), want))
		default:
			used[fname] = true
			if transposed {
				tt, err := t.Transpose(1, 0)
				if err != nil {
					errs = append(errs, fmt.Errorf("tensor %q: %w", fname, err))
					break
				}
				return tt
			}
			return t
		}
		return tensor.Zeros(tensor.Float32, 1) // never used: the errors end the load
	})
	if err != nil {
		return nil, fmt.Errorf("bert: LoadPretrained %s: %w", dir, err)
	}
	// The biases and LayerNorm parameters that build made take the file's values.
	for _, p := range m.params {
		if m.transposed[p.Name] || used[p.Name] || used["bert."+p.Name] {
			continue
		}
		fname, t, ok := lookup(file, p.Name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q is missing", p.Name))
		case t.DType() != tensor.Float32 || !t.Shape().Equal(p.Value.Shape()):
			errs = append(errs, fmt.Errorf("tensor %q is %v%v, want float32%v", fname, t.DType(), t.Shape(), p.Value.Shape()))
		default:
			used[fname] = true
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
		errs = append(errs, fmt.Errorf("tensor %q in the file belongs to no parameter of BertModel", name))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("bert: LoadPretrained %s: %w", path, errors.Join(errs...))
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
