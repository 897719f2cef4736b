// Command plumb trains and evaluates Plumb's book models and prints the
// parity report.
//
//	plumb train mnist [--model cnn|mlp] [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--device cpu|cuda]
//	plumb eval mnist --load FILE [--model cnn|mlp] [--data DIR] [--device cpu|cuda]
//	plumb train srl [--epochs N] [--batch N] [--lr X] [--crf-lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--heldout F]
//	plumb eval srl --load FILE [--data DIR] [--seed N] [--heldout F]
//	plumb train translate [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--beam N] [--eval-limit N]
//	plumb translate --load FILE [--beam N] [--batch N] < english.txt
//	plumb parity [--dir DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  plumb train mnist [--model cnn|mlp] [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--device cpu|cuda]
  plumb eval mnist --load FILE [--model cnn|mlp] [--data DIR] [--device cpu|cuda]
  plumb train srl [--epochs N] [--batch N] [--lr X] [--crf-lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--heldout F]
  plumb eval srl --load FILE [--data DIR] [--seed N] [--heldout F]
  plumb train translate [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--beam N] [--eval-limit N]
  plumb translate --load FILE [--beam N] [--batch N] < english.txt
  plumb parity [--dir DIR]
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "plumb:", err)
		}
		os.Exit(2)
	}
}

// run dispatches a command line; it is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) >= 1 && args[0] == "parity" {
		return parityReport(args[1:], stdout, stderr)
	}
	if len(args) >= 1 && args[0] == "translate" {
		return translateLines(args[1:], stdout, stderr)
	}
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	cmd, model, rest := args[0], args[1], args[2:]
	if model != "mnist" && model != "srl" && model != "translate" {
		return fmt.Errorf("unknown model family %q (this build knows mnist, srl, translate)\n%s", model, usage)
	}
	switch {
	case cmd == "train" && model == "translate":
		return trainTranslate(rest, stdout, stderr)
	case cmd == "train" && model == "srl":
		return trainSRL(rest, stdout, stderr)
	case cmd == "eval" && model == "srl":
		return evalSRL(rest, stdout, stderr)
	case cmd == "train" && model == "mnist":
		return trainMNIST(rest, stdout, stderr)
	case cmd == "eval" && model == "mnist":
		return evalMNIST(rest, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}
