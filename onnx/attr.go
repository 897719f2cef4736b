package onnx

import (
	"fmt"

	"github.com/plumbml/plumb/onnx/internal/pb"
)

// nodeWhere names a node for errors: its index, name, op type and the
// opset of its domain, and the subgraph holding it when it is not the main
// graph.
func (c *converter) nodeWhere(n Node, path string) string {
	opset := "not imported"
	for _, o := range c.opsets {
		if domainName(o.Domain) == domainName(n.Domain) {
			opset = fmt.Sprint(o.Version)
		}
	}
	s := fmt.Sprintf("node %d %q (%s, opset %s)", n.Index, n.Name, opName(n.Domain, n.OpType), opset)
	if path != "" {
		s += " in subgraph " + path
	}
	return s
}

// opName is the op type, prefixed by its domain outside ai.onnx.
func opName(domain, opType string) string {
	if domain == "" || domain == "ai.onnx" {
		return opType
	}
	return domain + "." + opType
}

// attr converts one attribute of node n to its typed Go value (see Attr).
func (c *converter) attr(a *pb.AttributeProto, n Node, path string) (any, error) {
	where := fmt.Sprintf("%s: attribute %q", c.nodeWhere(n, path), a.GetName())
	if a.GetRefAttrName() != "" {
		return nil, fmt.Errorf("onnx: %s refers to function attribute %q; expected a value (functions are not supported)", where, a.GetRefAttrName())
	}
	switch a.GetType() {
	case pb.AttributeProto_FLOAT:
		return a.GetF(), nil
	case pb.AttributeProto_INT:
		return a.GetI(), nil
	case pb.AttributeProto_STRING:
		return string(a.GetS()), nil
	case pb.AttributeProto_FLOATS:
		return nonNil(a.GetFloats()), nil
	case pb.AttributeProto_INTS:
		return nonNil(a.GetInts()), nil
	case pb.AttributeProto_STRINGS:
		s := make([]string, len(a.GetStrings()))
		for i, b := range a.GetStrings() {
			s[i] = string(b)
		}
		return s, nil
	case pb.AttributeProto_TENSOR:
		if a.GetT() == nil {
			return nil, fmt.Errorf("onnx: %s is of type TENSOR but holds none; expected a tensor", where)
		}
		return c.tensor(a.GetT(), where)
	case pb.AttributeProto_GRAPH:
		if a.GetG() == nil {
			return nil, fmt.Errorf("onnx: %s is of type GRAPH but holds none; expected a graph", where)
		}
		return c.graph(a.GetG(), fmt.Sprintf("%s of node %d %q", a.GetName(), n.Index, n.Name))
	case pb.AttributeProto_GRAPHS:
		gs := make([]*Graph, 0, len(a.GetGraphs()))
		for i, g := range a.GetGraphs() {
			sub, err := c.graph(g, fmt.Sprintf("%s[%d] of node %d %q", a.GetName(), i, n.Index, n.Name))
			if err != nil {
				return nil, err
			}
			gs = append(gs, sub)
		}
		return gs, nil
	}
	return nil, fmt.Errorf("onnx: %s has type %v, which is not supported; expected FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS, STRINGS or GRAPHS", where, a.GetType())
}

// nonNil returns s, or an empty slice for nil, so that an empty list
// attribute is a value rather than a typed nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
