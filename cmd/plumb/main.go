// Command plumb trains, evaluates and queries Plumb's book models, one
// driver for all seven chapters (mnist, cifar10, word2vec, recommender,
// sentiment, srl, translate), and reports on runs:
//
//	plumb train <chapter> [--model M] [--epochs N] [--batch N] [--lr X] [--seed N] [--data DIR] [--limit N] [--test-limit N]
//	            [--save FILE] [--load FILE] [--state FILE] [--resume FILE] [--log DIR] [--log-every N] [--device cpu|cuda] [--dist]
//	            [chapter flags: see plumb train <chapter> --help]
//	plumb eval <chapter> --load FILE [--data DIR] [--batch N] [--test-limit N] [--device cpu|cuda]
//	plumb predict <chapter> --load FILE [FILE...]   inputs from the files, or stdin
//	plumb infer --load FILE [--batch N] [FILE...]   as predict, on compiled inference plans
//	plumb infer --explain [--batch N] MODEL
//	plumb bench-infer [--load FILE | MODEL] [--batch 1,8,64] [--concurrency 1,8,64] [--duration D]
//	plumb translate --load FILE < english.txt       as plumb predict translate
//	plumb parity [--dir DIR]
//	plumb plot RUN [RUN...] [-o out.png] [--max-metrics N]
//	plumb compare RUN [RUN...] [-o out.png]
//	plumb kpi [--file FILE] [--reference GFLOPS] RUN [RUN...]
//	plumb summary <chapter> [--model M]
//	plumb scale [--workers 8,16,32] [--gbits 10,100] [--latency 25us,3us] [--batch N] [--gflops X] [--rate model=N,...]
//
// A checkpoint written by train --save knows its model (the chapter, its
// configuration, vocabularies and class names are in its metadata), so
// eval and predict need no --model. --data takes the dataset root (the
// folder holding mnist/, cifar10/, ptb/, ...) or the chapter's own
// folder. Every command and chapter takes --help.
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

// usage is the top-level usage: every command, and every chapter.
func usage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	b.WriteString("  plumb train <chapter> [--model M] [--epochs N] [--batch N] [--lr X] [--seed N] [--data DIR] [--limit N] [--test-limit N]\n")
	b.WriteString("              [--save FILE] [--load FILE] [--state FILE] [--resume FILE] [--log DIR] [--log-every N] [--device cpu|cuda] [--dist]\n")
	b.WriteString("  plumb eval <chapter> --load FILE [--data DIR] [--batch N] [--test-limit N] [--device cpu|cuda]\n")
	b.WriteString("  plumb predict <chapter> --load FILE [FILE...]    inputs from the files, or stdin\n")
	b.WriteString("  plumb translate --load FILE < english.txt        as plumb predict translate\n")
	b.WriteString("  plumb parity [--dir DIR]                         the operators against TensorFlow's goldens\n")
	b.WriteString("  plumb plot RUN [RUN...] [-o out.png] [--max-metrics N] curves of run logs (train --log DIR) in one PNG\n")
	b.WriteString("  plumb compare RUN [RUN...] [-o out.png]           the runs side by side, as a markdown table\n")
	b.WriteString("  plumb kpi [--file FILE] [--reference GFLOPS] RUN [RUN...]  Plumb's runs checked against the KPIs (bench/kpi.json, embedded)\n")
	b.WriteString("  plumb summary <chapter> [--model M]               each layer's output shape and parameters (Keras model.summary())\n")
	b.WriteString("  plumb onnx inspect FILE                           an ONNX model's inputs, outputs, opset, op counts and unsupported ops\n")
	b.WriteString("  plumb infer --load CKPT [--model M] [--batch N] [FILE...]  predict's output, run in batches on compiled inference plans\n")
	b.WriteString("  plumb infer --explain [--batch N] MODEL           the compiled inference plan before and after its fusion passes\n")
	b.WriteString("  plumb quantize --load CKPT [--method M] [--report] [-o OUT]  an MNIST checkpoint in int8 (plumb quantize --help)\n")
	b.WriteString("  plumb bench-infer [--load CKPT | MODEL] [--batch 1,8,64] [--concurrency 1,8,64] [--duration D]  plan latency and throughput\n")
	b.WriteString("  plumb scale [--workers 8,16,32] [--gbits 10,100] [--latency 25us,3us] [--batch N] [--gflops X] [--rate model=N,...]\n")
	b.WriteString("chapters (plumb train|eval|predict <chapter> --help for each one's flags):\n")
	b.WriteString(chapterUsage("train"))
	b.WriteString("predict reads:\n")
	b.WriteString(chapterUsage("predict"))
	return b.String()
}

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

// commands are plumb's commands by name. train, eval and predict take a
// chapter (chapterCommand, the one driver every chapter goes through).
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"train":   func(a []string, o, e io.Writer) error { return chapterCommand("train", a, o, e) },
	"eval":    func(a []string, o, e io.Writer) error { return chapterCommand("eval", a, o, e) },
	"predict": func(a []string, o, e io.Writer) error { return chapterCommand("predict", a, o, e) },
	"translate": func(a []string, o, e io.Writer) error {
		return chapterCommand("predict", append([]string{"translate"}, a...), o, e)
	},
	"parity":   parityReport,
	"plot":     plotRuns,
	"compare":  compareRuns,
	"kpi":      checkKPIs,
	"scale":    scaleReport,
	"summary":  summaryCommand,
	"onnx":     onnxCommand,
	"infer":    inferCommand,
	"quantize": quantizeCommand,

	"bench-infer": benchInferCommand,
}

// run dispatches a command line; it is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return errUsage
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage())
		return flag.ErrHelp
	}
	if c, ok := commands[args[0]]; ok {
		return c(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage())
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
