package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Case is one recorded golden, read from <op>/<case>/case.json under the
// testdata root; parity/record/record.py documents the files beside it.
type Case struct {
	Op        string `json:"op"`
	Name      string `json:"case"`
	Kind      string `json:"kind"` // "op", "optimizer", "model" or "decode"
	DType     string `json:"dtype"`
	Seed      int64  `json:"seed"`
	Tolerance string `json:"tolerance"` // a tolerance class; see tolerance.go
	Attrs     Attrs  `json:"attrs"`

	// Op cases: the number of inputs (in<i>.npy), the inputs with a
	// recorded gradient (grad<i>.npy) and those the op updates in place
	// (after<i>.npy).
	Inputs int   `json:"inputs"`
	Grads  []int `json:"grads"`
	After  []int `json:"after"`

	// Optimizer cases: the number of recorded steps.
	Steps int `json:"steps"`

	// Model cases: the input index that holds each parameter's value, by
	// the parameter's name (graph.Param.Name, such as "conv1/kernel").
	Params map[string]int `json:"params"`

	// The versions that recorded the case.
	TensorFlow string `json:"tensorflow"`
	Keras      string `json:"keras"`
	NumPy      string `json:"numpy"`

	fsys fs.FS
	dir  string
}

// Attrs are the attributes of every recorded op, model and optimizer;
// each case sets the ones it takes, under the names the recorder writes.
// The ops' attributes are ops.Attrs, from which ops.Build makes the op.
type Attrs struct {
	ops.Attrs

	// Models: multi-head attention's heads, key_dim and output features.
	Heads  int `json:"heads"`
	KeyDim int `json:"key_dim"`
	OutDim int `json:"out_dim"`

	// Optimizers, with Keras' argument names (Momentum and Epsilon, which
	// batch norm shares, are in ops.Attrs).
	LearningRate       float64 `json:"learning_rate"`
	Beta1              float64 `json:"beta_1"`
	Beta2              float64 `json:"beta_2"`
	Nesterov           bool    `json:"nesterov"`
	Rho                float64 `json:"rho"`
	Centered           bool    `json:"centered"`
	WeightDecay        float64 `json:"weight_decay"`
	InitialAccumulator float64 `json:"initial_accumulator_value"`
}

// ID names the case as <op>/<case> ("(nil case)" for nil, which a result
// of CheckCase(nil) holds).
func (c *Case) ID() string {
	if c == nil {
		return "(nil case)"
	}
	return c.Op + "/" + c.Name
}

// load reads the case's .npy file name.
func (c *Case) load(name string) (*tensor.Tensor, error) {
	return loadNpy(c.fsys, path.Join(c.dir, name))
}

// dtype returns the case's dtype.
func (c *Case) dtype() (tensor.DType, error) {
	switch c.DType {
	case "float32":
		return tensor.Float32, nil
	case "float64":
		return tensor.Float64, nil
	}
	return 0, fmt.Errorf("%s: unknown dtype %q", c.ID(), c.DType)
}

// LoadCases reads every case.json two levels below the root of fsys,
// sorted by op and case. Unknown fields are an error, so a recorder change
// that the harness does not understand fails loudly.
func LoadCases(fsys fs.FS) ([]*Case, error) {
	if fsys == nil {
		return nil, errors.New("parity: LoadCases: nil file system (pass os.DirFS of the testdata folder)")
	}
	files, err := fs.Glob(fsys, "*/*/case.json")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("parity: no */*/case.json under the testdata root")
	}
	var cases []*Case
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		c := &Case{fsys: fsys, dir: path.Dir(f)}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c); err != nil {
			return nil, fmt.Errorf("parity: %s: %w", f, err)
		}
		if want := path.Join(c.Op, c.Name); want != c.dir {
			return nil, fmt.Errorf("parity: %s names op %q case %q; want it in %s/", f, c.Op, c.Name, want)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID() < cases[j].ID() })
	return cases, nil
}
