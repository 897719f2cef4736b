package run

import (
	"sort"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// kernel computes a node's outputs from its inputs (nil for an absent
// optional input). It must not write to its inputs, which may be weights
// shared by concurrent Runs, and returns plain errors: the caller names the
// node.
type kernel func(in []*tensor.Tensor) ([]*tensor.Tensor, error)

// opDef is one entry of the op table: how to compile a node of the op.
type opDef struct {
	// minOpset is the first ai.onnx opset whose form of the op is
	// implemented (0: every opset the reader accepts).
	minOpset int64
	// noFold keeps a node with constant inputs as a run-time step.
	noFold bool
	// compile reads the node's attributes, checks its inputs' types and
	// shapes, fills in the outputs' infos it can infer and returns the
	// kernel.
	compile func(c *ctx) (kernel, error)
}

// table is the op table: ai.onnx op type to its entry. Each op's file
// registers its entry in init.
var table = map[string]opDef{}

func register(opType string, d opDef) {
	if _, dup := table[opType]; dup {
		panic("onnx/run: op " + opType + " registered twice")
	}
	table[opType] = d
}

func lookup(domain, opType string) (opDef, bool) {
	if domain != "" && domain != "ai.onnx" {
		return opDef{}, false
	}
	d, ok := table[opType]
	return d, ok
}

// IsSupported reports whether the importer runs op type opType of domain
// ("" or "ai.onnx" for the default domain).
func IsSupported(domain, opType string) bool {
	_, ok := lookup(domain, opType)
	return ok
}

// Supported lists the ai.onnx op types the importer runs, sorted.
func Supported() []string {
	out := make([]string, 0, len(table))
	for k := range table {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Inspect summarizes m as onnx.Inspect does, with Unsupported being the op
// types this package does not run.
func Inspect(m *onnx.Model) onnx.Summary { return onnx.InspectWith(m, IsSupported) }
