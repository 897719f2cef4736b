package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"

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

// Attrs are the attributes of every recorded op and optimizer; each case
// sets the ones its op takes, under the names the recorder writes.
type Attrs struct {
	// Elementwise: leaky_relu's and elu's alpha, clip's bounds.
	Alpha float64 `json:"alpha"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`

	// matmul.
	TransposeA bool `json:"transpose_a"`
	TransposeB bool `json:"transpose_b"`

	// Reductions (nil axes: every axis), gather, concat, slice, softmax.
	Axes     []int `json:"axes"`
	KeepDims bool  `json:"keepdims"`
	Axis     int   `json:"axis"`
	Begin    int   `json:"begin"`
	End      int   `json:"end"`
	Shape    []int `json:"shape"`
	Perm     []int `json:"perm"`

	// Losses: "mean", "sum" or "none".
	Reduction string `json:"reduction"`

	// embedding's padding index (negative: none).
	PaddingIdx int `json:"padding_idx"`

	// linear_softmax_cross_entropy's rows per chunk (0: its default).
	ChunkRows int `json:"chunk_rows"`

	// Ragged sequence ops: the offsets of the (first) ragged input, of
	// sequence_concat's second, sequence_pool's pooling and pad value, and
	// sequence_slice's per-sequence starts and lengths.
	Offsets  []int   `json:"offsets"`
	OffsetsB []int   `json:"offsets_b"`
	Pool     string  `json:"pool"`
	Pad      float64 `json:"pad"`
	Starts   []int   `json:"starts"`
	Lengths  []int   `json:"lengths"`

	// Attention: key-padding lengths, the causal mask and the score scale
	// (0: 1/sqrt(d)); multi-head attention's heads, key_dim and output
	// features.
	KeyLengths []int   `json:"key_lengths"`
	Causal     bool    `json:"causal"`
	Scale      float64 `json:"scale"`
	Heads      int     `json:"heads"`
	KeyDim     int     `json:"key_dim"`
	OutDim     int     `json:"out_dim"`

	// Recurrent ops: reverse processing (Keras go_backwards) and the GRU's
	// reset_after form.
	Reverse    bool `json:"reverse"`
	ResetAfter bool `json:"reset_after"`

	// sequence_conv's context window.
	ContextStart  int `json:"context_start"`
	ContextLength int `json:"context_length"`

	// Normalisation and dropout.
	Training bool    `json:"training"`
	NormAxes int     `json:"norm_axes"`
	Rate     float64 `json:"rate"`

	// Convolutions and pools: strides, dilations and kernel size as
	// [h, w]; padding "SAME", "VALID" or "EXPLICIT" with Pads as
	// [top, bottom, left, right].
	Strides   []int  `json:"strides"`
	Dilations []int  `json:"dilations"`
	Padding   string `json:"padding"`
	Pads      []int  `json:"pads"`
	Groups    int    `json:"groups"`
	Kernel    []int  `json:"kernel"`
	// conv2d_transpose's extra output rows and columns, [h, w].
	OutputPadding []int `json:"output_padding"`

	// Shared by batch norm and the optimizers.
	Momentum float64 `json:"momentum"`
	Epsilon  float64 `json:"epsilon"`

	// Optimizers, with Keras' argument names.
	LearningRate       float64 `json:"learning_rate"`
	Beta1              float64 `json:"beta_1"`
	Beta2              float64 `json:"beta_2"`
	Nesterov           bool    `json:"nesterov"`
	Rho                float64 `json:"rho"`
	Centered           bool    `json:"centered"`
	WeightDecay        float64 `json:"weight_decay"`
	InitialAccumulator float64 `json:"initial_accumulator_value"`
}

// ID names the case as <op>/<case>.
func (c *Case) ID() string { return c.Op + "/" + c.Name }

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
