// Command plumb trains and evaluates Plumb's book models and prints the
// parity report.
//
//	plumb train mnist [--model cnn|mlp] [--epochs N] [--batch N] [--lr X] [--seed N] [--save FILE] [--data DIR] [--limit N] [--device cpu|cuda]
//	plumb eval mnist --load FILE [--model cnn|mlp] [--data DIR] [--device cpu|cuda]
//	plumb train cifar10 [--model resnet32|vgg] [--depth N] [--width N] [--epochs N] [--batch N] [--lr X] [--seed N] [--augment] [--save FILE] [--best FILE] [--data DIR] [--format bin|jpeg] [--limit N] [--test-limit N]
//	plumb eval cifar10 --load FILE [--model resnet32|vgg] [--depth N] [--width N] [--data DIR] [--format bin|jpeg] [--test-limit N]
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
  plumb train cifar10 [--model resnet32|vgg] [--depth N] [--width N] [--epochs N] [--batch N] [--lr X] [--seed N] [--augment] [--save FILE] [--best FILE] [--data DIR] [--format bin|jpeg] [--limit N] [--test-limit N]
  plumb eval cifar10 --load FILE [--model resnet32|vgg] [--depth N] [--width N] [--data DIR] [--format bin|jpeg] [--test-limit N]
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
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	cmd, model, rest := args[0], args[1], args[2:]
	switch {
	case cmd == "train" && model == "cifar10":
		return trainCIFAR(rest, stdout, stderr)
	case cmd == "eval" && model == "cifar10":
		return evalCIFAR(rest, stdout, stderr)
	case model != "mnist":
		return fmt.Errorf("unknown model family %q (this build knows mnist and cifar10)\n%s", model, usage)
	}
	switch cmd {
	case "train":
		return trainMNIST(rest, stdout, stderr)
	case "eval":
		return evalMNIST(rest, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}
