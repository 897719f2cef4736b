// Package export writes a Plumb model's forward pass as an ONNX model
// (opset 17, IR version 8, readable by onnx 1.22's checker and ONNX
// Runtime), the inverse of package onnx's reader and onnx/run.
//
// Export traces the forward pass as infer.Trace does: it runs it once on
// an inference tape (dropout off, batch norm on its moving statistics)
// with example inputs and records, through graph.Tape.SetTrace, every op
// it applies. Each op becomes one or a few ONNX nodes; the tensors the
// forward reads that are not inputs (weights, moving statistics) become
// initializers. Dimension 0 of each input is the batch and is written as
// the symbolic dimension "batch", so one file serves every batch size;
// every other dimension is the example's.
//
// A ragged batch (tensor.Ragged: sequences of word ids packed end to end,
// split by offsets), which ONNX has no type for, is written in the padded
// form an ONNX or PyTorch model takes: the input is [batch, seq] (each
// sequence from column 0, anything after its end) and a second input,
// NAME_lengths [batch] int64, gives each sequence's length (several
// features of the same sentences may share one; see Input.Lengths); "seq"
// is symbolic too. A ragged output comes out padded the same way, zeros
// past each end. An op on the ragged rows then runs on [batch, seq, ...]
// (embedding, linear, elementwise ops), the sequence convolution masks the
// steps past each end and runs as a 1-D Conv, the sequence poolings are
// masked reductions, and a fused LSTM over the sequences is ONNX's LSTM
// with sequence_lens (the gate blocks reordered from Plumb's i, f, c, o to
// ONNX's i, o, f, c; see lstm.go).
//
// An op with no ONNX form here is an error naming it (its registry name,
// the node's position and its input shapes), as is a use of the batch
// that the symbolic dimension cannot express, such as a constant whose
// first dimension is the example's batch size.
package export

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Opset is the ai.onnx opset the exported models import, and IRVersion the
// IR version that goes with it (onnx's VERSION_TABLE: opset 17 came with
// IR version 8, onnx 1.12).
const (
	Opset     = 17
	IRVersion = 8
)

// Input describes one example input of the forward pass.
type Input struct {
	// Name is the ONNX input's name; empty means "input" for the first
	// input and "input1", "input2", ... for the others.
	Name string
	// Offsets, when set, say the input is the values of a ragged batch
	// (tensor.Ragged) with these offsets, as the forward pass reads it.
	// The ONNX model then takes the batch padded, [batch, seq, ...], and
	// its lengths as NAME_lengths [batch] int64.
	Offsets []int
	// Lengths, for a ragged input, names its lengths input instead of
	// NAME_lengths. Ragged inputs that name the same one are features of
	// the same sentences (their example offsets must be equal): they share
	// the lengths and are padded to the same seq.
	Lengths string
}

// Options name the model's inputs and output.
type Options struct {
	// Inputs describe the example inputs in order; missing entries are
	// dense inputs with default names.
	Inputs []Input
	// Output is the ONNX output's name; empty means "output".
	Output string
	// Producer is the model's producer_name; empty means "plumb".
	Producer string
}

// Export traces forward on example (see the package doc) and writes the
// ONNX model to w.
func Export(w io.Writer, forward infer.Forward, example []*tensor.Tensor, opts Options) error {
	b, err := Marshal(forward, example, opts)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Save is Export to a new file at path.
func Save(path string, forward infer.Forward, example []*tensor.Tensor, opts Options) error {
	b, err := Marshal(forward, example, opts)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Marshal traces forward on example and returns the ONNX model's bytes.
func Marshal(forward infer.Forward, example []*tensor.Tensor, opts Options) ([]byte, error) {
	m, err := build(forward, example, opts)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("onnx/export: %w", err)
	}
	return b, nil
}

// val is what the exporter knows of one Plumb tensor of the trace: its
// ONNX value and how the ONNX value's dims relate to the tensor's.
type val struct {
	name string
	t    *tensor.Tensor // the tensor the trace saw
	// batch: dimension 0 is the symbolic batch (an input's, or an op's
	// output that inherits it).
	batch bool
	// seq, for the rows of a ragged batch: the tensor's [total, ...] is
	// the ONNX value's [batch, seq, ...].
	seq *sequences
	// hc, for a fused LSTM's [total, 2H] output: name is ONNX's h alone
	// (per step), and c' is not available.
	hc bool
	// final and reverse, with hc: ONNX LSTM's Y_h and Y_c [1, batch, H]
	// (each sequence's final state) and its direction.
	final   [2]string
	reverse bool
	// konst: an initializer (a weight), not computed from the inputs.
	konst bool
	// err: the op that made the tensor, or one it depends on, has no ONNX
	// form; the error names it.
	err error
}

// sequences is one ragged input: its offsets and the ONNX values derived
// from its lengths, made on first use.
type sequences struct {
	offsets []int
	lengths string // NAME_lengths [batch] int64
	ids     string // the padded input [batch, seq]
	derived map[string]string
}

// exporter builds the ONNX graph while the forward pass runs.
type exporter struct {
	g      *pb.GraphProto
	vals   map[*tensor.Tensor]*val
	consts map[*tensor.Tensor]string // initializers, by the tensor they were made from
	nextID int
	nodeN  int // Plumb ops seen, for errors
	// lengths are the ragged inputs' sequences, by their lengths input.
	lengths map[string]*sequences
	// reserved are the graph's input and output names, which fresh
	// never returns.
	reserved map[string]bool
}

// build traces forward and returns the model.
func build(forward infer.Forward, example []*tensor.Tensor, opts Options) (*pb.ModelProto, error) {
	if forward == nil {
		return nil, errors.New("onnx/export: Export of a nil forward pass")
	}
	if len(example) == 0 {
		return nil, errors.New("onnx/export: no example inputs; expected at least one")
	}
	if len(opts.Inputs) > len(example) {
		return nil, fmt.Errorf("onnx/export: %d input descriptions for %d example inputs", len(opts.Inputs), len(example))
	}
	e := &exporter{g: &pb.GraphProto{Name: proto.String("plumb")}, vals: map[*tensor.Tensor]*val{}, consts: map[*tensor.Tensor]string{},
		lengths: map[string]*sequences{}}
	names := map[string]bool{}
	e.reserved = names
	for i, x := range example {
		var in Input
		if i < len(opts.Inputs) {
			in = opts.Inputs[i]
		}
		if err := e.input(i, x, in, names); err != nil {
			return nil, err
		}
	}
	out := opts.Output
	if out == "" {
		out = "output"
	}
	if names[out] {
		return nil, fmt.Errorf("onnx/export: output name %q is an input's too", out)
	}
	tape := graph.NewEvalTape()
	names[out] = true // the output's name is taken only by renaming the output's node
	tape.SetTrace(func(op ops.Op, in []*tensor.Tensor, y *tensor.Tensor) {
		e.op(op, in, y)
		e.nodeN++
	})
	y, err := forward(tape, example).Tensor()
	if err != nil {
		return nil, fmt.Errorf("onnx/export: the forward pass failed: %w", err)
	}
	v, ok := e.vals[y]
	switch {
	case ok && v.err != nil:
		return nil, v.err
	case !ok || v.konst:
		return nil, errors.New("onnx/export: the output is not computed by an op from the inputs")
	case v.hc:
		return nil, errors.New("onnx/export: the output is a fused LSTM's [h, c] rows; expected a dense output")
	}
	switch {
	case v.seq != nil:
		// The rows of a ragged batch come out padded, [batch, seq, ...],
		// zeros past each sequence's end.
		m := e.expand(e.mask(v.seq), 2, y.Rank()+1)
		e.node("Where", []string{m, v.name, e.scalar(y.DType(), 0)}, []string{out})
	case !e.rename(v.name, out):
		e.node("Identity", []string{v.name}, []string{out})
	}
	e.g.Output = []*pb.ValueInfoProto{valueInfo(out, y.DType(), dims(y.Shape(), v.batch, v.seq != nil))}
	e.pruneDead(out)
	e.pruneInitializers()
	producer := opts.Producer
	if producer == "" {
		producer = "plumb"
	}
	return &pb.ModelProto{
		IrVersion:    proto.Int64(IRVersion),
		ProducerName: proto.String(producer),
		OpsetImport:  []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(Opset)}},
		Graph:        e.g,
	}, nil
}

// input adds example input i.
func (e *exporter) input(i int, x *tensor.Tensor, in Input, names map[string]bool) error {
	switch {
	case x == nil:
		return fmt.Errorf("onnx/export: example input %d is nil", i)
	case x.Storage() != nil:
		return fmt.Errorf("onnx/export: example input %d is on %v; expected host memory", i, x.Device())
	case e.vals[x] != nil:
		return fmt.Errorf("onnx/export: example input %d is the same tensor as an earlier one", i)
	case x.Rank() == 0:
		return fmt.Errorf("onnx/export: example input %d is a scalar; expected dimension 0 to be the batch", i)
	}
	name := in.Name
	if name == "" {
		name = "input"
		if i > 0 {
			name = fmt.Sprintf("input%d", i)
		}
	}
	if names[name] {
		return fmt.Errorf("onnx/export: two inputs named %q", name)
	}
	names[name] = true
	v := &val{name: name, t: x, batch: true}
	if in.Offsets == nil {
		e.g.Input = append(e.g.Input, valueInfo(name, x.DType(), dims(x.Shape(), true, false)))
		e.vals[x] = v
		return nil
	}
	off := in.Offsets
	if len(off) < 2 || off[0] != 0 || off[len(off)-1] != x.Dim(0) {
		return fmt.Errorf("onnx/export: input %q: offsets %v do not split its %d rows; expected 0, ..., %d with at least one sequence", name, off, x.Dim(0), x.Dim(0))
	}
	for q := 1; q < len(off); q++ {
		if off[q] < off[q-1] {
			return fmt.Errorf("onnx/export: input %q: offsets %v decrease at %d", name, off, q)
		}
	}
	lengths := in.Lengths
	if lengths == "" {
		lengths = name + "_lengths"
	}
	v.batch = false
	e.g.Input = append(e.g.Input, valueInfo(name, x.DType(), dims(x.Shape(), true, true)))
	e.vals[x] = v
	if s, ok := e.lengths[lengths]; ok { // another feature of the same sentences
		if !slices.Equal(s.offsets, off) {
			return fmt.Errorf("onnx/export: input %q shares lengths %q with input %q, but its offsets %v are not that input's %v", name, lengths, s.ids, off, s.offsets)
		}
		v.seq = s
		return nil
	}
	if names[lengths] {
		return fmt.Errorf("onnx/export: two inputs named %q", lengths)
	}
	names[lengths] = true
	v.seq = &sequences{offsets: append([]int(nil), off...), lengths: lengths, ids: name, derived: map[string]string{}}
	e.lengths[lengths] = v.seq
	e.g.Input = append(e.g.Input, valueInfo(lengths, tensor.Int64, []any{"batch"}))
	return nil
}

// dims are a value's ONNX dims: the symbolic "batch" first when batch,
// then "seq" when ragged (the tensor's dim 0, its rows, standing for
// both), then the shape's other dims.
func dims(s tensor.Shape, batch, ragged bool) []any {
	var d []any
	rest := []int(s)
	switch {
	case ragged:
		d = append(d, "batch", "seq")
		rest = rest[1:]
	case batch:
		d = append(d, "batch")
		rest = rest[1:]
	}
	for _, n := range rest {
		d = append(d, n)
	}
	return d
}

// valueInfo is a graph input or output of dtype dt and dims (ints and
// symbolic names).
func valueInfo(name string, dt tensor.DType, ds []any) *pb.ValueInfoProto {
	shape := &pb.TensorShapeProto{}
	for _, d := range ds {
		dim := &pb.TensorShapeProto_Dimension{}
		switch d := d.(type) {
		case string:
			dim.Value = &pb.TensorShapeProto_Dimension_DimParam{DimParam: d}
		case int:
			dim.Value = &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(elemType(dt))), Shape: shape}}}}
}

// elemType is the ONNX element type of a Plumb dtype.
func elemType(dt tensor.DType) pb.TensorProto_DataType {
	switch dt {
	case tensor.Float32:
		return pb.TensorProto_FLOAT
	case tensor.Float64:
		return pb.TensorProto_DOUBLE
	case tensor.Int32:
		return pb.TensorProto_INT32
	}
	return pb.TensorProto_INT64
}

// fresh returns a new value name, none of the inputs' or the output's.
func (e *exporter) fresh() string {
	for {
		e.nextID++
		if name := fmt.Sprintf("v%d", e.nextID); !e.reserved[name] {
			return name
		}
	}
}

// node appends an ONNX node and returns its first output.
func (e *exporter) node(opType string, in, out []string, attrs ...*pb.AttributeProto) string {
	e.g.Node = append(e.g.Node, &pb.NodeProto{
		Name:      proto.String(fmt.Sprintf("%s_%d", opType, len(e.g.Node))),
		OpType:    proto.String(opType),
		Input:     in,
		Output:    out,
		Attribute: attrs,
	})
	return out[0]
}

// apply appends a one-output node on fresh output and returns its name.
func (e *exporter) apply(opType string, in []string, attrs ...*pb.AttributeProto) string {
	return e.node(opType, in, []string{e.fresh()}, attrs...)
}

// rename makes the node producing from produce to instead, and reports
// whether one did.
func (e *exporter) rename(from, to string) bool {
	for _, n := range e.g.Node {
		for i, o := range n.Output {
			if o == from {
				n.Output[i] = to
				for _, m := range e.g.Node {
					for j, x := range m.Input {
						if x == from {
							m.Input[j] = to
						}
					}
				}
				return true
			}
		}
	}
	return false
}

// pruneDead drops the nodes the output does not depend on: those of ops
// the forward pass ran for values it did not return (a model's other
// heads, the padded encoder states beside a decoder's initial state).
func (e *exporter) pruneDead(out string) {
	needed := map[string]bool{out: true}
	keep := make([]bool, len(e.g.Node))
	for i := len(e.g.Node) - 1; i >= 0; i-- {
		n := e.g.Node[i]
		for _, o := range n.Output {
			keep[i] = keep[i] || needed[o]
		}
		if keep[i] {
			for _, in := range n.Input {
				needed[in] = true
			}
		}
	}
	kept := e.g.Node[:0]
	for i, n := range e.g.Node {
		if keep[i] {
			kept = append(kept, n)
		}
	}
	e.g.Node = kept
}

// pruneInitializers drops the initializers no node reads: the weights an
// op's translation replaced by a reordered copy (an LSTM's, a sequence
// convolution's filter, an embedding table with its padding row zeroed).
func (e *exporter) pruneInitializers() {
	used := map[string]bool{}
	for _, n := range e.g.Node {
		for _, in := range n.Input {
			used[in] = true
		}
	}
	e.g.Initializer = slices.DeleteFunc(e.g.Initializer, func(t *pb.TensorProto) bool { return !used[t.GetName()] })
}

// constant adds t as an initializer (once per tensor) and returns its name.
func (e *exporter) constant(t *tensor.Tensor) string {
	if name, ok := e.consts[t]; ok {
		return name
	}
	name := e.fresh()
	e.consts[t] = name
	e.g.Initializer = append(e.g.Initializer, tensorProto(name, t))
	return name
}

// ints64 adds a constant int64 vector.
func (e *exporter) ints64(v ...int64) string {
	return e.constant(tensor.MustFromSlice(v, len(v)))
}

// scalar adds a constant 0-d tensor of dtype dt holding v.
func (e *exporter) scalar(dt tensor.DType, v float64) string {
	t := tensor.Zeros(dt)
	t.SetAt(0, v)
	return e.constant(t)
}

// tensorProto is t as an initializer, little-endian in raw_data.
func tensorProto(name string, t *tensor.Tensor) *pb.TensorProto {
	dims := make([]int64, t.Rank())
	for i, d := range t.Shape() {
		dims[i] = int64(d)
	}
	raw := make([]byte, 0, t.Size()*t.DType().Size())
	switch t.DType() {
	case tensor.Float32:
		for _, v := range t.Float32s() {
			raw = appendU32(raw, math.Float32bits(v))
		}
	case tensor.Float64:
		for _, v := range t.Float64s() {
			raw = appendU64(raw, math.Float64bits(v))
		}
	case tensor.Int32:
		for _, v := range t.Int32s() {
			raw = appendU32(raw, uint32(v))
		}
	default:
		for _, v := range t.Int64s() {
			raw = appendU64(raw, uint64(v))
		}
	}
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(elemType(t.DType()))), RawData: raw}
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendU64(b []byte, v uint64) []byte { return appendU32(appendU32(b, uint32(v)), uint32(v>>32)) }

// Attribute builders.

func attrInt(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrInts(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func attrFloat(name string, v float64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(float32(v))}
}

func attrString(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func attrStrings(name string, v ...string) *pb.AttributeProto {
	a := &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

// opError is an error of the current op: its name, position in the trace
// and input shapes, and what went wrong.
func (e *exporter) opError(op ops.Op, in []*tensor.Tensor, format string, args ...any) error {
	err := ops.Errorf(op.Name(), in, format, args...)
	return fmt.Errorf("onnx/export: op %d: %w", e.nodeN, err)
}

// op translates one traced op application. An op that cannot be
// written, and every op downstream of it, gets a value holding the error,
// which is Export's error only if the output depends on it: a forward
// pass may compute what it does not return.
func (e *exporter) op(op ops.Op, in []*tensor.Tensor, out *tensor.Tensor) {
	v, err := e.translate(op, in, out)
	if err != nil {
		v = &val{err: err}
	}
	v.t = out
	e.vals[out] = v
}

func (e *exporter) translate(op ops.Op, in []*tensor.Tensor, out *tensor.Tensor) (v *val, err error) {
	defer func() {
		// An op whose attributes or inputs are not the form its
		// translation reads (one built without typed attributes, say)
		// fails as an error of that op, never as a panic out of Export.
		if r := recover(); r != nil {
			v, err = nil, e.opError(op, in, "cannot be translated (%v); expected the inputs and typed attributes (ops.Attributed) of the registered op", r)
		}
	}()
	vs := make([]*val, len(in))
	for i, t := range in {
		v, ok := e.vals[t]
		if !ok {
			v = &val{name: e.constant(t), t: t, konst: true}
			e.vals[t] = v
		}
		if v.err != nil {
			return nil, v.err
		}
		vs[i] = v
	}
	f, ok := translators[op.Name()]
	if !ok {
		return nil, e.opError(op, in, "has no ONNX export; expected one of the ops in docs/onnx.md, \"Export a model\"")
	}
	for i, v := range vs {
		if v.hc && op.Name() != "slice" && op.Name() != "rnn_final_state" {
			return nil, e.opError(op, in, "input %d is a fused LSTM's [h, c] rows, whose c part ONNX's LSTM does not output per step; expected a slice of its h columns or the final state", i)
		}
	}
	v, err = f(e, call{op: op, in: in, vs: vs, out: out})
	if err != nil {
		return nil, e.opError(op, in, "%v", err)
	}
	return v, nil
}

// call is one op application being translated.
type call struct {
	op  ops.Op
	in  []*tensor.Tensor
	vs  []*val
	out *tensor.Tensor
}

// attrs returns the op's typed attributes, or nil.
func (c call) attrs() any {
	if a, ok := c.op.(ops.Attributed); ok {
		return a.Attrs()
	}
	return nil
}

// translator writes the ONNX nodes of one op and returns its output value
// (name and layout; the caller sets t).
type translator func(e *exporter, c call) (*val, error)

// translators are the ops Export writes, by registry name; each family's
// file adds its entries in init.
var translators = map[string]translator{}

func register(name string, f translator) {
	if _, dup := translators[name]; dup {
		panic("onnx/export: op " + name + " registered twice")
	}
	translators[name] = f
}

// Supported lists the Plumb ops Export writes.
func Supported() []string {
	out := make([]string, 0, len(translators))
	for k := range translators {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
