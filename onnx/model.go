package onnx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/plumbml/plumb/internal/readlimit"
	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/tensor"
)

// The opsets of the default domain (ai.onnx) that Plumb reads.
const (
	MinOpset = 11
	MaxOpset = 21
)

// DefaultMaxModelBytes is the largest model file Decode accepts unless
// Options.MaxModelBytes raises it: 2 GiB, protobuf's own ceiling for one
// message. Larger models keep their weights in external data.
const DefaultMaxModelBytes int64 = 2 << 30

// DefaultMaxExternalBytes is the most external data one model may read,
// all files together, unless Options.MaxExternalBytes raises it.
const DefaultMaxExternalBytes int64 = 32 << 30

// Options bound and direct a Decode. The zero value is the defaults.
type Options struct {
	// MaxModelBytes is the largest model (the .onnx file itself) accepted;
	// zero or negative means DefaultMaxModelBytes.
	MaxModelBytes int64
	// MaxExternalBytes is the most external tensor data read, all
	// tensors together; zero or negative means DefaultMaxExternalBytes.
	MaxExternalBytes int64
	// Dir is the directory external data locations are resolved in (Load
	// sets it to the model file's directory). Empty: a model with
	// external data is refused.
	Dir string
}

func (o Options) resolve() Options {
	if o.MaxModelBytes <= 0 {
		o.MaxModelBytes = DefaultMaxModelBytes
	}
	if o.MaxExternalBytes <= 0 {
		o.MaxExternalBytes = DefaultMaxExternalBytes
	}
	return o
}

// Opset is one entry of a model's opset imports: an operator domain ("" is
// the default domain, ai.onnx) and its version.
type Opset struct {
	Domain  string
	Version int64
}

// Model is a decoded ONNX model.
type Model struct {
	IRVersion       int64
	ProducerName    string
	ProducerVersion string
	// Opset is the version of the default domain (ai.onnx), within
	// MinOpset..MaxOpset.
	Opset int64
	// Opsets are all the opset imports, in the file's order. Domains other
	// than ai.onnx (ai.onnx.ml, vendors') version independently and are
	// kept as they are; their nodes show up in Summary.Unsupported.
	Opsets []Opset
	Graph  *Graph
}

// Graph is an ONNX graph: the model's main graph, or a subgraph held by a
// node's attribute (If, Loop, Scan).
type Graph struct {
	Name string
	// Inputs are the graph's inputs that are not initializers (an older
	// exporter lists initializers among the inputs too; those are left
	// out here, as they are given by Initializers).
	Inputs  []Value
	Outputs []Value
	// Initializers are the graph's constant tensors, in the file's order.
	Initializers []Initializer
	Nodes        []Node
}

// Initializer is a named constant tensor of a graph.
type Initializer struct {
	Name   string
	Tensor *tensor.Tensor
	// Elem is the tensor's ONNX element type: FLOAT, DOUBLE, INT32, INT64,
	// BOOL, which Tensor holds as int64 0 and 1, or FLOAT16 or BFLOAT16,
	// which Tensor holds widened to float32.
	Elem ElemType
}

// Initializer returns the initializer called name, or nil (also for a
// nil graph).
func (g *Graph) Initializer(name string) *tensor.Tensor {
	if g == nil {
		return nil
	}
	for _, in := range g.Initializers {
		if in.Name == name {
			return in.Tensor
		}
	}
	return nil
}

// Value is a graph input or output: its name, element type and shape.
type Value struct {
	Name string
	Elem ElemType
	// Shape is nil when the file gives no shape (rank unknown).
	Shape []Dim
}

// Dim is one dimension of a Value's shape: a size (Param empty), a
// symbolic name such as "batch" (Param set, Size -1), or unknown (Param
// empty, Size -1).
type Dim struct {
	Size  int64
	Param string
}

// String is the size, the symbolic name, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Size < 0:
		return "?"
	}
	return fmt.Sprint(d.Size)
}

// ElemType is an ONNX tensor element type (TensorProto.DataType).
type ElemType int32

// String is the ONNX name of the type (FLOAT, INT64, FLOAT16, ...).
func (e ElemType) String() string {
	if name, ok := pb.TensorProto_DataType_name[int32(e)]; ok {
		return name
	}
	return fmt.Sprintf("DataType(%d)", int32(e))
}

// Node is one node of a graph.
type Node struct {
	// Index is the node's position in its graph.
	Index   int
	Name    string
	OpType  string
	Domain  string
	Inputs  []string
	Outputs []string
	// Attrs are the node's attributes in the file's order.
	Attrs []Attr
}

// Attr is a node attribute with its value as a typed Go value: float32,
// int64, string, *tensor.Tensor, *Graph, []float32, []int64, []string or
// []*Graph (ONNX's FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS,
// STRINGS, GRAPHS).
type Attr struct {
	Name  string
	Value any
	// Elem is the ONNX element type of a TENSOR value (see
	// Initializer.Elem), zero for the other kinds.
	Elem ElemType
}

// Attr returns the value of the attribute called name, and whether the
// node has it (a nil node has none).
func (n *Node) Attr(name string) (any, bool) {
	if n == nil {
		return nil, false
	}
	for _, a := range n.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

// Load reads the model file at path, resolving external data in its
// directory, with the default limits (see Decode).
func Load(path string) (*Model, error) {
	return LoadWith(path, Options{})
}

// LoadWith is Load with opts; opts.Dir, when empty, becomes the model's
// directory.
func LoadWith(path string, opts Options) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("onnx: %s is not a regular file (mode %v)", path, st.Mode())
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Dir(path)
	}
	m, err := Decode(f, st.Size(), opts)
	if err != nil {
		return nil, fmt.Errorf("%w (model %s)", err, path)
	}
	return m, nil
}

// Decode reads a model of size bytes from r. A size over
// opts.MaxModelBytes is refused before anything is read, and only size
// bytes are read (an r that ends early is an error). Every tensor is
// checked against the data the file actually holds before it is built;
// external data is read from opts.Dir (see Options).
func Decode(r io.Reader, size int64, opts Options) (*Model, error) {
	opts = opts.resolve()
	if size < 0 {
		return nil, fmt.Errorf("onnx: negative model size %d", size)
	}
	if size > opts.MaxModelBytes {
		return nil, fmt.Errorf("onnx: model of %d bytes is over the limit of %d bytes (raise Options.MaxModelBytes, or keep the weights in external data)", size, opts.MaxModelBytes)
	}
	buf, err := readlimit.Full(r, size)
	if err != nil {
		return nil, fmt.Errorf("onnx: reading the model: %w", err)
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(buf, &mp); err != nil {
		return nil, fmt.Errorf("onnx: the model is not a valid ModelProto: %w", err)
	}
	buf = nil
	return convertModel(&mp, opts)
}

func convertModel(mp *pb.ModelProto, opts Options) (*Model, error) {
	m := &Model{
		IRVersion:       mp.GetIrVersion(),
		ProducerName:    mp.GetProducerName(),
		ProducerVersion: mp.GetProducerVersion(),
	}
	seen := false
	for _, op := range mp.GetOpsetImport() {
		o := Opset{Domain: op.GetDomain(), Version: op.GetVersion()}
		m.Opsets = append(m.Opsets, o)
		if o.Domain != "" && o.Domain != "ai.onnx" {
			continue
		}
		if seen {
			return nil, fmt.Errorf("onnx: ai.onnx is imported twice (opset %d and %d); expected one import", m.Opset, o.Version)
		}
		seen = true
		if o.Version < MinOpset || o.Version > MaxOpset {
			return nil, fmt.Errorf("onnx: opset import of domain %q version %d is not supported; expected ai.onnx versions %d to %d", domainName(o.Domain), o.Version, MinOpset, MaxOpset)
		}
		m.Opset = o.Version
	}
	if !seen {
		return nil, fmt.Errorf("onnx: the model imports no ai.onnx opset; expected one of versions %d to %d", MinOpset, MaxOpset)
	}
	if mp.Graph == nil {
		return nil, errors.New("onnx: the model has no graph")
	}
	c := &converter{opts: opts, opsets: m.Opsets}
	g, err := c.graph(mp.Graph, "")
	if err != nil {
		return nil, err
	}
	m.Graph = g
	return m, nil
}

func domainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

// converter turns the protobuf messages into the Plumb-side view,
// drawing external data on one budget for the whole model.
type converter struct {
	opts     Options
	opsets   []Opset
	external int64 // bytes of external data read so far
}

// graph converts g; path names it in errors ("" for the main graph, else
// the node and attribute that hold it).
func (c *converter) graph(g *pb.GraphProto, path string) (*Graph, error) {
	where := "graph"
	if path != "" {
		where = "subgraph " + path
	}
	if len(g.GetSparseInitializer()) > 0 {
		return nil, fmt.Errorf("onnx: %s %q: sparse initializer %q is not supported; expected dense initializers", where, g.GetName(), g.GetSparseInitializer()[0].GetValues().GetName())
	}
	out := &Graph{Name: g.GetName()}
	inits := make(map[string]bool, len(g.GetInitializer()))
	for _, t := range g.GetInitializer() {
		tt, err := c.tensor(t, fmt.Sprintf("%s: initializer %q", where, t.GetName()))
		if err != nil {
			return nil, err
		}
		inits[t.GetName()] = true
		out.Initializers = append(out.Initializers, Initializer{Name: t.GetName(), Tensor: tt, Elem: ElemType(t.GetDataType())})
	}
	for _, vi := range g.GetInput() {
		if inits[vi.GetName()] {
			continue
		}
		v, err := value(vi, where+": input")
		if err != nil {
			return nil, err
		}
		out.Inputs = append(out.Inputs, v)
	}
	for _, vi := range g.GetOutput() {
		v, err := value(vi, where+": output")
		if err != nil {
			return nil, err
		}
		out.Outputs = append(out.Outputs, v)
	}
	out.Nodes = make([]Node, 0, len(g.GetNode()))
	for i, n := range g.GetNode() {
		node := Node{
			Index:   i,
			Name:    n.GetName(),
			OpType:  n.GetOpType(),
			Domain:  n.GetDomain(),
			Inputs:  n.GetInput(),
			Outputs: n.GetOutput(),
		}
		for _, a := range n.GetAttribute() {
			v, err := c.attr(a, node, path)
			if err != nil {
				return nil, err
			}
			at := Attr{Name: a.GetName(), Value: v}
			if a.GetType() == pb.AttributeProto_TENSOR {
				at.Elem = ElemType(a.GetT().GetDataType())
			}
			node.Attrs = append(node.Attrs, at)
		}
		out.Nodes = append(out.Nodes, node)
	}
	return out, nil
}

// value converts a graph input or output; only tensor types are read.
func value(vi *pb.ValueInfoProto, where string) (Value, error) {
	v := Value{Name: vi.GetName()}
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return v, fmt.Errorf("onnx: %s %q is not a tensor (sequence, map and optional values are not supported); expected a tensor type", where, vi.GetName())
	}
	v.Elem = ElemType(tt.GetElemType())
	if sh := tt.GetShape(); sh != nil {
		v.Shape = make([]Dim, 0, len(sh.GetDim()))
		for _, d := range sh.GetDim() {
			switch x := d.GetValue().(type) {
			case *pb.TensorShapeProto_Dimension_DimValue:
				if x.DimValue < 0 {
					return v, fmt.Errorf("onnx: %s %q has dim %d; expected a size of at least 0 or a symbolic name", where, vi.GetName(), x.DimValue)
				}
				v.Shape = append(v.Shape, Dim{Size: x.DimValue})
			case *pb.TensorShapeProto_Dimension_DimParam:
				v.Shape = append(v.Shape, Dim{Size: -1, Param: x.DimParam})
			default:
				v.Shape = append(v.Shape, Dim{Size: -1})
			}
		}
	}
	return v, nil
}
