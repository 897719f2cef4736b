package run

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// node is an ONNX node being compiled or run, with the opset of its
// domain and its name for errors.
type node struct {
	*onnx.Node
	opset int64
	where string // node index, name, op type, opset
}

// NodeError is an error of one node: compiling or running it. Its text
// names the node, its op type and opset, and says what was expected.
type NodeError struct {
	Index  int
	Name   string
	OpType string
	Opset  int64
	Err    error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("onnx/run: node %d %q (%s, opset %d): %v", e.Index, e.Name, e.OpType, e.Opset, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

func (n *node) errorf(format string, args ...any) error {
	return n.wrap(fmt.Errorf(format, args...))
}

// wrap makes err an error of n, unless it already is one.
func (n *node) wrap(err error) error {
	var ne *NodeError
	if errors.As(err, &ne) {
		return err
	}
	return &NodeError{Index: n.Index, Name: n.Name, OpType: opName(n.Domain, n.OpType), Opset: n.opset, Err: err}
}

// allow fails for an attribute of n not among names: an attribute the
// importer does not read would be silently ignored otherwise.
func (n *node) allow(names ...string) error {
	for _, a := range n.Attrs {
		if !slices.Contains(names, a.Name) {
			if len(names) == 0 {
				return n.errorf("attribute %q is not supported; expected no attributes", a.Name)
			}
			return n.errorf("attribute %q is not supported; expected only %v", a.Name, names)
		}
	}
	return nil
}

func (n *node) intAttr(name string, def int64) (int64, error) {
	v, ok := n.Attr(name)
	if !ok {
		return def, nil
	}
	i, ok := v.(int64)
	if !ok {
		return 0, n.errorf("attribute %q is %s; expected INT", name, attrKind(v))
	}
	return i, nil
}

func (n *node) floatAttr(name string, def float32) (float32, error) {
	v, ok := n.Attr(name)
	if !ok {
		return def, nil
	}
	f, ok := v.(float32)
	if !ok {
		return 0, n.errorf("attribute %q is %s; expected FLOAT", name, attrKind(v))
	}
	return f, nil
}

func (n *node) stringAttr(name, def string) (string, error) {
	v, ok := n.Attr(name)
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", n.errorf("attribute %q is %s; expected STRING", name, attrKind(v))
	}
	return s, nil
}

// intsAttr returns the INTS attribute name and whether the node has it.
func (n *node) intsAttr(name string) ([]int64, bool, error) {
	v, ok := n.Attr(name)
	if !ok {
		return nil, false, nil
	}
	s, ok := v.([]int64)
	if !ok {
		return nil, false, n.errorf("attribute %q is %s; expected INTS", name, attrKind(v))
	}
	return s, true, nil
}

func (n *node) floatsAttr(name string) ([]float32, bool, error) {
	v, ok := n.Attr(name)
	if !ok {
		return nil, false, nil
	}
	s, ok := v.([]float32)
	if !ok {
		return nil, false, n.errorf("attribute %q is %s; expected FLOATS", name, attrKind(v))
	}
	return s, true, nil
}

func (n *node) stringsAttr(name string) ([]string, bool, error) {
	v, ok := n.Attr(name)
	if !ok {
		return nil, false, nil
	}
	s, ok := v.([]string)
	if !ok {
		return nil, false, n.errorf("attribute %q is %s; expected STRINGS", name, attrKind(v))
	}
	return s, true, nil
}

func attrKind(v any) string {
	switch v.(type) {
	case float32:
		return "FLOAT"
	case int64:
		return "INT"
	case string:
		return "STRING"
	case *tensor.Tensor:
		return "TENSOR"
	case *onnx.Graph:
		return "GRAPH"
	case []float32:
		return "FLOATS"
	case []int64:
		return "INTS"
	case []string:
		return "STRINGS"
	case []*onnx.Graph:
		return "GRAPHS"
	}
	return fmt.Sprintf("%T", v)
}

// ctx is one node's compile: its inputs' infos, and the outputs' infos
// its op's compile function fills in.
type ctx struct {
	n   *node
	in  []info
	out []info
	// plan is set when the graph is compiled for one input signature, to
	// be lowered onto an inference plan: the op's compile function may
	// skip what only its interpreter kernel uses (packed weights).
	plan bool
	// lower, set by the op's compile function where the node maps onto
	// ops an infer.Builder can hold, adds the node to a plan's graph.
	lower lowerFn
	// conv and act, set by Conv and by the activations after it, let a
	// plan fuse the two (fuseConvAct).
	conv *convSpec
	act  *actSpec
}

// arity checks the number of inputs (absent optional ones counted) and
// outputs; max -1 is unbounded.
func (c *ctx) arity(minIn, maxIn, maxOut int) error {
	if len(c.in) < minIn || (maxIn >= 0 && len(c.in) > maxIn) {
		if maxIn < 0 {
			return c.n.errorf("has %d inputs; expected at least %d", len(c.in), minIn)
		}
		if minIn == maxIn {
			return c.n.errorf("has %d inputs; expected %d", len(c.in), minIn)
		}
		return c.n.errorf("has %d inputs; expected %d to %d", len(c.in), minIn, maxIn)
	}
	for i := 0; i < minIn; i++ {
		if c.in[i].absent {
			return c.n.errorf("input %d is empty; expected a value (it is not optional)", i)
		}
	}
	if len(c.n.Outputs) > maxOut {
		return c.n.errorf("has %d outputs; expected at most %d", len(c.n.Outputs), maxOut)
	}
	return nil
}

// has reports whether optional input i is given.
func (c *ctx) has(i int) bool { return i < len(c.in) && !c.in[i].absent }

// float checks that input i is FLOAT or DOUBLE (when its type is known).
func (c *ctx) float(i int) error {
	e := c.in[i].elem
	if e != 0 && !isFloatElem(e) {
		return c.n.errorf("input %d %q is %v; expected FLOAT or DOUBLE", i, c.n.Inputs[i], e)
	}
	return nil
}

// sameElem checks that the given inputs have one element type.
func (c *ctx) sameElem(idx ...int) error {
	var e onnx.ElemType
	first := -1
	for _, i := range idx {
		if !c.has(i) || c.in[i].elem == 0 {
			continue
		}
		if e == 0 {
			e, first = c.in[i].elem, i
			continue
		}
		if c.in[i].elem != e {
			return c.n.errorf("input %d %q is %v but input %d %q is %v; expected one element type", first, c.n.Inputs[first], e, i, c.n.Inputs[i], c.in[i].elem)
		}
	}
	return nil
}

// constInts returns input i's value, which must be known at compile time.
func (c *ctx) constInts(i int, what string) ([]int64, error) {
	v, ok := c.in[i].ints()
	if !ok {
		if c.in[i].konst != nil {
			return nil, c.n.errorf("input %d %q (%s) is %v; expected an int64 tensor", i, c.n.Inputs[i], what, c.in[i].elem)
		}
		return nil, c.n.errorf("input %d %q (%s) is computed at run time; expected a constant (an initializer, a Constant or a value that folds)", i, c.n.Inputs[i], what)
	}
	return v, nil
}

// rank is input i's rank, or -1 when unknown.
func (c *ctx) rank(i int) int {
	if c.in[i].shape == nil {
		return -1
	}
	return len(c.in[i].shape)
}

// shapeStr formats a compile-time shape, ? for unknown dims.
func shapeStr(s []int) string {
	if s == nil {
		return "[rank unknown]"
	}
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		if d < 0 {
			b = append(b, '?')
		} else {
			b = fmt.Append(b, d)
		}
	}
	return string(append(b, ']'))
}

// axis normalizes a possibly negative axis against rank r.
func (n *node) axis(a int64, r int, what string) (int, error) {
	if a < -int64(r) || a >= int64(r) {
		return 0, n.errorf("%s %d is out of range for rank %d; expected %d to %d", what, a, r, -r, r-1)
	}
	if a < 0 {
		a += int64(r)
	}
	return int(a), nil
}
