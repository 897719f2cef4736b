//go:build mpi

package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/dist"
)

// rankArgsEnv, set with a rank's number appended (PLUMB_CMD_TEST_ARGS0,
// ...), tells a test binary started by mpirun to run that command line,
// its words separated by spaces, as plumb would (see TestMain), instead of
// the tests.
const rankArgsEnv = "PLUMB_CMD_TEST_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(rankArgsEnv + string(rune('0'+dist.LaunchedRank()))); ok {
		os.Exit(runMain(strings.Fields(args)))
	}
	os.Exit(m.Run())
}

// Two ranks of plumb train mnist --dist whose command lines differ in the
// model, the learning rate or the training set's size (--limit), one of
// which fails before it joins the group (an unknown model, bad data) or
// mid-run, or which both diverge, end within 10 s of the start with an
// error naming the difference or the failure, though the watchdog would
// wait a minute.
func TestMpirunRanksDisagree(t *testing.T) {
	const common = "train mnist --dist --model mlp --limit 640 --epochs 1 "
	tests := []struct {
		name, rank1, want string
		rank0             string // rank 0's flags after common
	}{
		{"model", "--model cnn", "dist: the ranks disagree on recipe model: rank 0 has mlp, rank 1 has cnn", ""},
		{"lr", "--lr 10", "dist: the ranks disagree on recipe lr: rank 0 has 0.001, rank 1 has 10;", ""},
		{"limit", "--limit 320", "dist: the ranks disagree on recipe train_size: rank 0 has 640, rank 1 has 320", ""},
		{"seed", "--seed 2", "dist: the ranks disagree on recipe seed: rank 0 has 1, rank 1 has 2;", ""},
		{"dtype", "--dtype float64", "dist: the ranks disagree on recipe dtype: rank 0 has float32, rank 1 has float64;", ""},
		{"fails before joining", "--model bogus", `plumb: mnist: unknown model "bogus"`, ""},
		// BAD is a directory whose MNIST files are not IDX.
		{"bad data", "--data BAD", "idx: bad magic 6e 6f 74 20", ""},
		// Both ranks diverge: the mean loss over the ranks is not finite
		// on every rank, and every rank stops at the same step.
		{"diverges", "--lr 1e30", "loss is NaN", "--lr 1e30"},
		// Rank 0's --loss-trace fills up after a few hundred steps:
		// rank 0 fails mid-run while rank 1 waits in an allreduce.
		{"fails mid-run", "--batch 1 --limit 2000", "/dev/full: no space left on device", "--batch 1 --limit 2000 --loss-trace /dev/full"},
	}
	bad := t.TempDir()
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		require.NoError(t, os.WriteFile(filepath.Join(bad, name), []byte("not an IDX file"), 0o644))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, took := mpirunPlumb(t, common+tc.rank0, common+strings.ReplaceAll(tc.rank1, "BAD", bad))
			assert.Contains(t, out, tc.want)
			assert.NotContains(t, out, "epoch 1/1: train loss") // the epoch did not end
			t.Logf("ended in %v:\n%s", took.Round(time.Millisecond), out)
		})
	}
}

// The CIFAR-10 trainer's ranks compare their recipes too: here the
// ResNet's width differs.
func TestMpirunCIFARRanksDisagree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	root := t.TempDir()
	dir := filepath.Join(root, "cifar10", "lossless-subset")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	writeCIFARBin(t, filepath.Join(dir, "data_batch_1.bin"), 24, rng)
	writeCIFARBin(t, filepath.Join(dir, "test_batch.bin"), 10, rng)
	common := "train cifar10 --dist --data " + root + " --depth 8 --batch 4 --epochs 1 "
	out, took := mpirunPlumb(t, common+"--width 2", common+"--width 4")
	assert.Contains(t, out, "dist: the ranks disagree on recipe width: rank 0 has 2, rank 1 has 4")
	t.Logf("ended in %v:\n%s", took.Round(time.Millisecond), out)
}

// mpirunPlumb runs this test binary as 2 ranks of plumb with the command
// lines rank0 and rank1 (words separated by spaces) under a one-minute
// watchdog, checks that the job failed within 10 s, and returns its output
// and duration. Without mpirun the test is skipped, unless
// PLUMB_REQUIRE_MPI is set (as CI does).
func mpirunPlumb(t *testing.T, rank0, rank1 string) (string, time.Duration) {
	t.Helper()
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		if os.Getenv("PLUMB_REQUIRE_MPI") != "" {
			t.Fatalf("mpirun not found and PLUMB_REQUIRE_MPI is set: %v", err)
		}
		t.Skip("mpirun not found (install openmpi-bin: dist/install-mpi.sh)")
	}
	cmd := exec.Command(bin, "--allow-run-as-root", "--oversubscribe", "-np", "2", os.Args[0])
	cmd.Env = append(os.Environ(), "PLUMB_DIST_TIMEOUT=60s", rankArgsEnv+"0="+rank0, rankArgsEnv+"1="+rank1)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	require.Error(t, err, "%s", out)
	assert.Less(t, took, 10*time.Second, "%s", out)
	return string(out), took
}
