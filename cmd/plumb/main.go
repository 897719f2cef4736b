// Command plumb trains and evaluates Plumb's book models and prints the
// parity report.
//
//	plumb train mnist [--model cnn|mlp] [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--device cpu|cuda] [--log DIR] [--log-every N] [--state FILE] [--resume FILE] [--dist] [--dtype float32|float64]
//	plumb eval mnist --load FILE [--model cnn|mlp] [--data DIR] [--device cpu|cuda]
//	plumb train cifar10 [--model resnet32|vgg] [--depth N] [--width N] [--epochs N] [--batch N] [--lr X] [--seed N] [--augment] [--save FILE] [--best FILE] [--data DIR] [--format bin|jpeg] [--limit N] [--test-limit N] [--log DIR] [--state FILE] [--resume FILE] [--dist]
//	plumb eval cifar10 --load FILE [--model resnet32|vgg] [--depth N] [--width N] [--data DIR] [--format bin|jpeg] [--test-limit N]
//	plumb train word2vec|recommender|sentiment [--model lstm|cnn] [flags as train mnist, and --load FILE]
//	plumb word2vec similar WORD --load FILE [--k N] [--data DIR]
//	plumb train srl [--epochs N] [--batch N] [--lr X] [--crf-lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--heldout F]
//	plumb eval srl --load FILE [--data DIR] [--seed N] [--heldout F] [--device cpu|cuda]
//	plumb train translate [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--beam N] [--eval-limit N]
//	plumb translate --load FILE [--beam N] [--batch N] [--device cpu|cuda] < english.txt
//	plumb parity [--dir DIR]
//	plumb plot RUN [RUN...] [-o out.png] [--max-metrics N]
//	plumb compare RUN [RUN...] [-o out.png]
//	plumb kpi [--file FILE] [--reference GFLOPS] RUN [RUN...]
//	plumb summary mnist [--model cnn|mlp]
//	plumb scale [--workers 8,16,32] [--gbits 10,100] [--latency 25us,3us] [--batch N] [--gflops X] [--rate model=N,...]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/plumbml/plumb/dist"
	trainpkg "github.com/plumbml/plumb/train"
)

const usage = `usage:
  plumb train mnist [--model cnn|mlp] [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--device cpu|cuda] [--log DIR] [--log-every N] [--state FILE] [--resume FILE] [--dist] [--dtype float32|float64]
  plumb eval mnist --load FILE [--model cnn|mlp] [--data DIR] [--device cpu|cuda]
  plumb train cifar10 [--model resnet32|vgg] [--depth N] [--width N] [--epochs N] [--batch N] [--lr X] [--seed N] [--augment] [--save FILE] [--best FILE] [--data DIR] [--format bin|jpeg] [--limit N] [--test-limit N] [--log DIR] [--state FILE] [--resume FILE] [--dist]
  plumb eval cifar10 --load FILE [--model resnet32|vgg] [--depth N] [--width N] [--data DIR] [--format bin|jpeg] [--test-limit N]
  plumb train word2vec|recommender|sentiment [--model lstm|cnn] [flags as train mnist, and --load FILE]
  plumb word2vec similar WORD --load FILE [--k N] [--data DIR]
  plumb train srl [--epochs N] [--batch N] [--lr X] [--crf-lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--heldout F]
  plumb eval srl --load FILE [--data DIR] [--seed N] [--heldout F] [--device cpu|cuda]
  plumb train translate [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--beam N] [--eval-limit N]
  plumb translate --load FILE [--beam N] [--batch N] [--device cpu|cuda] < english.txt
  plumb parity [--dir DIR]
  plumb plot RUN [RUN...] [-o out.png] [--max-metrics N] curves of run logs (train --log DIR) in one PNG
  plumb compare RUN [RUN...] [-o out.png]           the runs side by side, as a markdown table
  plumb kpi [--file FILE] [--reference GFLOPS] RUN [RUN...]  the table, and Plumb's runs checked against the KPIs (bench/kpi.json, embedded)
  plumb summary mnist [--model cnn|mlp]              each layer's output shape and parameters (Keras model.summary())
  plumb onnx inspect FILE                           an ONNX model's inputs, outputs, opset, op counts and unsupported ops
  plumb infer --explain [--batch N] MODEL           the compiled inference plan before and after its fusion passes
  plumb scale [--workers 8,16,32] [--gbits 10,100] [--latency 25us,3us] [--batch N] [--gflops X] [--rate model=N,...]
`

func main() {
	os.Exit(runMain(os.Args[1:]))
}

// runMain runs the command line args and returns the process status; it
// is main without the exit, for tests that run the binary under mpirun.
func runMain(args []string) int {
	stdout, stderr := io.Writer(os.Stdout), io.Writer(os.Stderr)
	if dist.Launched() > 1 && dist.LaunchedRank() != 0 {
		// One of several processes mpirun started: rank 0 prints the
		// progress, logs and results; this one prints only its error.
		stdout, stderr = io.Discard, io.Discard
	}
	code := exitStatus(run(args, stdout, stderr), os.Stderr)
	if code != 0 {
		// When this is one of several processes mpirun started, stopped
		// by an error (printed above): end every rank now, rather than
		// leave them waiting in a collective for the watchdog
		// (dist.Abort; it does nothing otherwise).
		dist.Abort(code)
	}
	return code
}

// exitStatus prints err (unless its message is already out) and returns
// the process status: 0 for success and for --help, 130 for a run stopped
// by Ctrl-C, 2 for any other error.
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // --help: the usage is printed, as asked
		return 0
	case errors.Is(err, trainpkg.ErrInterrupted): // Ctrl-C: the run saved its state (interrupt.go)
		fmt.Fprintln(stderr, "plumb:", err)
		return trainpkg.ExitInterrupted
	case !errors.Is(err, errUsage): // errUsage: the usage is already on stderr
		fmt.Fprintln(stderr, "plumb:", err)
	}
	return 2
}

// errUsage is a command line too short to name a command; run has already
// printed the usage.
var errUsage = errors.New("usage")

// run dispatches a command line; it is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) >= 1 {
		switch args[0] {
		case "parity":
			return parityReport(args[1:], stdout, stderr)
		case "plot":
			return plotRuns(args[1:], stdout, stderr)
		case "compare":
			return compareRuns(args[1:], stdout, stderr)
		case "kpi":
			return checkKPIs(args[1:], stdout, stderr)
		case "scale":
			return scaleReport(args[1:], stdout, stderr)
		case "summary": // h20: summary.go
			return summaryCommand(args[1:], stdout, stderr)
		case "word2vec":
			return word2vecCommand(args[1:], stdout, stderr)
		case "translate":
			return translateLines(args[1:], stdout, stderr)
		case "onnx":
			return onnxCommand(args[1:], stdout, stderr)
		case "infer":
			return inferCommand(args[1:], stdout, stderr)
		case "help", "-h", "-help", "--help": // isHelp
			fmt.Fprint(stdout, usage)
			return flag.ErrHelp
		}
	}
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, model, rest := args[0], args[1], args[2:]
	if cmd != "train" && cmd != "eval" {
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if isHelp(model) {
		fmt.Fprint(stdout, commandUsage(cmd))
		return flag.ErrHelp
	}
	if cmd == "train" {
		if train, ok := chapterTrainers[model]; ok {
			return train(rest, stdout, stderr)
		}
	}
	commands := map[[2]string]func(args []string, stdout, stderr io.Writer) error{
		{"train", "mnist"}:     trainMNIST,
		{"eval", "mnist"}:      evalMNIST,
		{"train", "cifar10"}:   trainCIFAR,
		{"eval", "cifar10"}:    evalCIFAR,
		{"train", "srl"}:       trainSRL,
		{"eval", "srl"}:        evalSRL,
		{"train", "translate"}: trainTranslate,
	}
	if c, ok := commands[[2]string{cmd, model}]; ok {
		return c(rest, stdout, stderr)
	}
	for k := range commands {
		if k[1] == model {
			return fmt.Errorf("unknown command %q for %s\n%s", cmd, model, usage)
		}
	}
	return fmt.Errorf("unknown model family %q for %s (this build knows mnist, cifar10, word2vec, recommender, sentiment, srl, translate)\n%s", model, cmd, usage)
}

// isHelp reports whether arg asks for help, as the flag package's -h and
// -help do, and --help.
func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// commandUsage is the part of the usage text that describes cmd: its
// "usage:" line and every line naming "plumb cmd".
func commandUsage(cmd string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(usage, "\n") {
		if strings.HasPrefix(line, "usage:") || strings.Contains(line, "plumb "+cmd+" ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// parseFlags parses args into fs and rejects anything left over: the flag
// package stops at the first argument that is not a flag, and would
// otherwise silently drop it and every flag after it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (flags take the form --name value; see --help)", fs.Name(), fs.Arg(0))
	}
	return nil
}
