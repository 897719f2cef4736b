package onnx

import (
	"fmt"
	"sort"
	"strings"
)

// Supported reports whether this package runs op type opType of domain:
// it runs none, since it only reads models (package onnx/run runs them;
// run.Inspect summarizes a model against run's op table).
func Supported(domain, opType string) bool { return false }

// Summary is what `plumb onnx inspect` prints about a model.
type Summary struct {
	Inputs  []Value
	Outputs []Value
	// Opset is the ai.onnx version; Opsets all imports.
	Opset  int64
	Opsets []Opset
	// OpCounts counts the nodes by op type (domain-qualified outside
	// ai.onnx), those of subgraphs (If, Loop, Scan bodies) included.
	OpCounts map[string]int
	// Unsupported are the op types in OpCounts that Plumb does not run
	// yet, sorted.
	Unsupported []string
}

// Inspect summarizes m against Supported; a nil model has an empty
// summary.
func Inspect(m *Model) Summary { return InspectWith(m, Supported) }

// InspectWith summarizes m, listing in Unsupported the op types for which
// supported(domain, opType) is false (a nil supported lists every op
// type).
func InspectWith(m *Model, supported func(domain, opType string) bool) Summary {
	if m == nil {
		return Summary{OpCounts: map[string]int{}}
	}
	s := Summary{Opset: m.Opset, Opsets: m.Opsets, OpCounts: map[string]int{}}
	if m.Graph == nil {
		return s
	}
	s.Inputs, s.Outputs = m.Graph.Inputs, m.Graph.Outputs
	types := map[string][2]string{}
	count(m.Graph, s.OpCounts, types)
	for op := range s.OpCounts {
		t := types[op]
		if supported == nil || !supported(t[0], t[1]) {
			s.Unsupported = append(s.Unsupported, op)
		}
	}
	sort.Strings(s.Unsupported)
	return s
}

// count adds g's nodes to into by qualified op type, and each qualified
// name's (domain, op type) to types.
func count(g *Graph, into map[string]int, types map[string][2]string) {
	for _, n := range g.Nodes {
		q := opName(n.Domain, n.OpType)
		into[q]++
		types[q] = [2]string{n.Domain, n.OpType}
		for _, a := range n.Attrs {
			switch v := a.Value.(type) {
			case *Graph:
				count(v, into, types)
			case []*Graph:
				for _, sub := range v {
					count(sub, into, types)
				}
			}
		}
	}
}

// String formats the summary as lines of text.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "opset: %d", s.Opset)
	for _, o := range s.Opsets {
		if o.Domain != "" && o.Domain != "ai.onnx" {
			fmt.Fprintf(&b, ", %s %d", o.Domain, o.Version)
		}
	}
	b.WriteString("\n")
	for _, io := range []struct {
		name string
		vs   []Value
	}{{"input", s.Inputs}, {"output", s.Outputs}} {
		for _, v := range io.vs {
			dims := make([]string, len(v.Shape))
			for i, d := range v.Shape {
				dims[i] = d.String()
			}
			shape := "[" + strings.Join(dims, ", ") + "]"
			if v.Shape == nil {
				shape = "(shape unknown)"
			}
			fmt.Fprintf(&b, "%s %s: %v %s\n", io.name, v.Name, v.Elem, shape)
		}
	}
	ops := make([]string, 0, len(s.OpCounts))
	for op := range s.OpCounts {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, "op %s: %d\n", op, s.OpCounts[op])
	}
	if len(s.Unsupported) > 0 {
		fmt.Fprintf(&b, "unsupported: %s\n", strings.Join(s.Unsupported, ", "))
	}
	return b.String()
}
