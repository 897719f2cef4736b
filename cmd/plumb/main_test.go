package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Train a quick MLP, save it, and evaluate the checkpoint: the accuracy eval
// prints must be the one training printed.
func TestTrainSaveEval(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "mlp.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "2000", "--batch", "32", "--save", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "epoch 1/1: train loss")
	require.Contains(t, out.String(), "saved "+ckpt)
	require.Contains(t, errOut.String(), " images/s", "progress goes to stderr, its rate in the chapter's unit")
	acc := regexp.MustCompile(`accuracy \d\.\d{4}`).FindString(out.String())
	require.NotEmpty(t, acc)

	out.Reset()
	require.NoError(t, run([]string{"eval", "mnist", "--model", "mlp", "--load", ckpt}, &out, &errOut))
	require.Contains(t, out.String(), acc)

	// The same checkpoint is not the CNN: the error names the model the
	// file holds (TestCheckpointNamesItsModel).
	err := run([]string{"eval", "mnist", "--model", "cnn", "--load", ckpt}, &out, &errOut)
	require.ErrorContains(t, err, "--model mlp")
}

func TestUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train"}, ""},
		{[]string{"train", "cifar"}, `unknown chapter "cifar"`},
		{[]string{"fly", "mnist"}, "unknown command"},
		{[]string{"eval", "mnist"}, "--load FILE"},
		{[]string{"train", "mnist", "--model", "rnn"}, `unknown model "rnn"`},
		{[]string{"train", "mnist", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
		{[]string{"eval", "mnist", "--load", "/nonexistent/x.safetensors"}, "no such file"},
	} {
		err := run(c.args, &out, &errOut)
		require.Error(t, err, c.args)
		require.Contains(t, err.Error(), c.want, c.args)
	}
}

// Every mistake on the command line is reported before the data loads and
// training starts (out stays empty: no "training ..." line), and nothing
// after a stray argument is silently dropped.
func TestCommandLineChecksBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"stray argument", []string{"--model", "mlp", "--limit", "10", "typo", "--save", filepath.Join(dir, "x")}, `unexpected argument "typo"`},
		{"save in a missing directory", []string{"--limit", "10", "--save", filepath.Join(dir, "missing", "x")}, "cannot write in the directory"},
		{"save onto a directory", []string{"--limit", "10", "--save", dir}, "is a directory"},
		{"batch 0", []string{"--batch", "0", "--data", "/nonexistent"}, "--batch 0"},
		{"epochs 0", []string{"--epochs", "0", "--data", "/nonexistent"}, "--epochs 0"},
		{"negative limit", []string{"--limit", "-1"}, "--limit -1"},
		{"zero learning rate", []string{"--lr", "0"}, "--lr 0"},
		{"NaN learning rate", []string{"--lr", "NaN"}, "--lr NaN"},
		{"unknown model before data", []string{"--model", "rnn", "--data", "/nonexistent"}, `unknown model "rnn"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(append([]string{"train", "mnist"}, c.args...), &out, &errOut)
			require.ErrorContains(t, err, c.want)
			require.Empty(t, out.String(), "nothing may run before the error")
		})
	}
	var out, errOut bytes.Buffer
	require.ErrorContains(t, run([]string{"eval", "mnist", "--load", "x", "extra"}, &out, &errOut), `unexpected argument "extra"`)
	require.ErrorContains(t, run([]string{"parity", "extra"}, &out, &errOut), `unexpected argument "extra"`)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the save-path check leaves nothing behind")
}

// --help (at the top or after a command) is not an error: status 0. A
// command line too short to act on, or a mistake, is status 2.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--help"}, 0},
		{[]string{"help"}, 0},
		{[]string{"train", "mnist", "--help"}, 0},
		{[]string{"eval", "mnist", "-h"}, 0},
		{[]string{"parity", "--help"}, 0},
		{[]string{}, 2},
		{[]string{"train"}, 2},
		{[]string{"train", "mnist", "--batch", "0"}, 2},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, c.want, exitStatus(run(c.args, &out, &errOut), &errOut), c.args)
		require.NotEmpty(t, out.String()+errOut.String(), "something is printed: %v", c.args)
	}
}

// A run that diverges (here a learning rate of 1e30) stops with an error
// naming the step and saves nothing.
func TestDivergedRunSavesNothing(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "nan.safetensors")
	var out, errOut bytes.Buffer
	err := run([]string{"train", "mnist", "--model", "mlp", "--limit", "640", "--lr", "1e30", "--save", ckpt}, &out, &errOut)
	require.ErrorContains(t, err, "epoch 1, step ")
	require.ErrorContains(t, err, "loss is ")
	require.ErrorContains(t, err, "nothing saved")
	require.NoFileExists(t, ckpt)
}

func TestParityReport(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"parity", "--dir", "../../parity/testdata"}, &out, &errOut))
	require.Contains(t, out.String(), "conv2d")
	require.Contains(t, out.String(), "optim_adam")
	require.NotContains(t, out.String(), "FAIL")
	empty := t.TempDir()
	require.ErrorContains(t, run([]string{"parity", "--dir", empty}, &out, &errOut), empty)
	// Run outside the repository root, the error names the folder it looked in.
	require.ErrorContains(t, run([]string{"parity", "--dir", "no/such/testdata"}, &out, &errOut), "no/such/testdata")
}

// --help after train or eval prints that command's usage and ends as help
// does (exit 0).
func TestCommandHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--help"}, "plumb train mnist"},
		{[]string{"train", "-h"}, "plumb train translate"},
		{[]string{"eval", "--help"}, "plumb eval mnist"},
		{[]string{"eval", "help"}, "plumb eval cifar10"},
	} {
		var out, errOut bytes.Buffer
		err := run(c.args, &out, &errOut)
		require.ErrorIs(t, err, flag.ErrHelp, c.args)
		require.Contains(t, out.String(), c.want, c.args)
		require.NotContains(t, out.String(), "plumb plot", c.args)
	}
}
