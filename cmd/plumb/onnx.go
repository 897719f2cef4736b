package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/onnx"
	onnxrun "github.com/plumbml/plumb/onnx/run"
)

// onnxUsage documents plumb onnx.
const onnxUsage = `usage:
  plumb onnx inspect FILE   an ONNX model's inputs, outputs, opset, op counts, unsupported ops
                            and the path it runs on at batch 1 (plan or interpreter)
  plumb onnx explain [--batch N] [--dim NAME=SIZE ...] FILE
                            the plan compiled for that signature, before and after its
                            passes (or why the model runs on the interpreter)
`

// onnxCommand runs `plumb onnx inspect FILE`: the model's opset, inputs and
// outputs (element types and dims, symbolic ones by name), its op counts,
// the op types the importer does not run, whether the graph compiles
// (the first error if not: node, op type, opset and what was expected) and
// which path Run takes at batch 1; and `plumb onnx explain FILE`: the plan
// for one signature.
func onnxCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, onnxUsage)
		if len(args) == 0 {
			return errors.New("plumb onnx: expected a subcommand (inspect or explain)")
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "inspect":
		return onnxInspect(args[1:], stdout, stderr)
	case "explain":
		return onnxExplain(args[1:], stdout, stderr)
	}
	return fmt.Errorf("plumb onnx: unknown subcommand %q; expected inspect or explain\n%s", args[0], onnxUsage)
}

func onnxInspect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("onnx inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
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
	dims, err := signature(m, c.InputNames(), 1, nil)
	if err != nil {
		fmt.Fprintf(stdout, "runs on: unknown (%v)\n", err)
		return nil
	}
	path, why, err := c.PathFor(dims)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "runs on: unknown (%v)\n", err)
	case why != "":
		fmt.Fprintf(stdout, "runs on: %v at %v (%s)\n", path, dims, why)
	default:
		fmt.Fprintf(stdout, "runs on: %v at %v (see plumb onnx explain)\n", path, dims)
	}
	return nil
}

// dimFlags collects --dim NAME=SIZE.
type dimFlags map[string]int

func (d dimFlags) String() string { return fmt.Sprint(map[string]int(d)) }

func (d dimFlags) Set(v string) error {
	name, size, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(size)
	if !ok || name == "" || err != nil || n < 1 {
		return fmt.Errorf("%q: expected NAME=SIZE with a positive size", v)
	}
	d[name] = n
	return nil
}

// onnxExplain runs `plumb onnx explain`: the signature's path, and the
// plan before and after its passes (run.Model.Explain).
func onnxExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("onnx explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Int("batch", 1, "the size of every symbolic dimension --dim does not name")
	dims := dimFlags{}
	fs.Var(dims, "dim", "NAME=SIZE for the symbolic dimension NAME (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *batch < 1 {
		return fmt.Errorf("plumb onnx explain: expected one model file and a positive --batch\n%s", onnxUsage)
	}
	m, err := onnx.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := onnxrun.Compile(m)
	if err != nil {
		return err
	}
	sig, err := signature(m, c.InputNames(), *batch, dims)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model: %s, inputs %v\n", fs.Arg(0), sig)
	return c.Explain(stdout, sig)
}

// signature gives each graph input named in names its declared dims, a
// symbolic one the size sym gives its name, else def.
func signature(m *onnx.Model, names []string, def int, sym map[string]int) (map[string][]int, error) {
	out := map[string][]int{}
	for _, v := range m.Graph.Inputs {
		if !slices.Contains(names, v.Name) {
			continue
		}
		if v.Shape == nil {
			return nil, fmt.Errorf("graph input %q has no declared shape; expected dims to explain", v.Name)
		}
		d := make([]int, len(v.Shape))
		for i, s := range v.Shape {
			switch {
			case s.Size > 0:
				d[i] = int(s.Size)
			case sym[s.Param] > 0:
				d[i] = sym[s.Param]
			default:
				d[i] = def
			}
		}
		out[v.Name] = d
	}
	return out, nil
}
