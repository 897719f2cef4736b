package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/onnx"
	onnxrun "github.com/plumbml/plumb/onnx/run"
)

// onnxUsage documents plumb onnx.
const onnxUsage = `usage:
  plumb onnx inspect FILE   an ONNX model's inputs, outputs, opset, op counts and unsupported ops
`

// onnxCommand runs `plumb onnx inspect FILE`: the model's opset, inputs and
// outputs (element types and dims, symbolic ones by name), its op counts,
// the op types the importer does not run, and whether the graph compiles
// (the first error if not: node, op type, opset and what was expected).
func onnxCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, onnxUsage)
		if len(args) == 0 {
			return errors.New("plumb onnx: expected a subcommand (inspect)")
		}
		return flag.ErrHelp
	}
	if args[0] != "inspect" {
		return fmt.Errorf("plumb onnx: unknown subcommand %q; expected inspect\n%s", args[0], onnxUsage)
	}
	fs := flag.NewFlagSet("onnx inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("plumb onnx inspect: expected one model file, got %d arguments\n%s", fs.NArg(), onnxUsage)
	}
	m, err := onnx.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	s := onnxrun.Inspect(m)
	fmt.Fprintf(stdout, "model: %s (producer %q %s, IR version %d)\n", fs.Arg(0), m.ProducerName, m.ProducerVersion, m.IRVersion)
	fmt.Fprint(stdout, s.String())
	if len(s.Unsupported) == 0 {
		fmt.Fprintln(stdout, "unsupported: none")
	}
	c, err := onnxrun.Compile(m)
	if err != nil {
		fmt.Fprintf(stdout, "compile: %v\n", err)
		return nil
	}
	fmt.Fprintf(stdout, "compile: ok, %d of %d nodes run at run time (the others fold into constants or feed only folded values)\n", c.Steps(), len(m.Graph.Nodes))
	return nil
}
