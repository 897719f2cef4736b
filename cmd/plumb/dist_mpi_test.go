//go:build mpi

package main

import (
	"os"
	"os/exec"
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
// model, the learning rate or the training set's size (--limit), or one
// of which fails before it joins the group or mid-run, end within 10 s of
// the start with an error naming the difference or the failure, though
// the watchdog would wait a minute.
func TestMpirunRanksDisagree(t *testing.T) {
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		if os.Getenv("PLUMB_REQUIRE_MPI") != "" {
			t.Fatalf("mpirun not found and PLUMB_REQUIRE_MPI is set: %v", err)
		}
		t.Skip("mpirun not found (install openmpi-bin: dist/install-mpi.sh)")
	}
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
		// Rank 0's --loss-trace fills up after a few hundred steps:
		// rank 0 fails mid-run while rank 1 waits in an allreduce.
		{"fails mid-run", "--batch 1 --limit 2000", "/dev/full: no space left on device", "--batch 1 --limit 2000 --loss-trace /dev/full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--allow-run-as-root", "--oversubscribe", "-np", "2", os.Args[0])
			cmd.Env = append(os.Environ(), "PLUMB_DIST_TIMEOUT=60s",
				rankArgsEnv+"0="+common+tc.rank0, rankArgsEnv+"1="+common+tc.rank1)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			require.Error(t, err, "%s", out)
			assert.Less(t, took, 10*time.Second, "%s", out)
			assert.Contains(t, string(out), tc.want)
			assert.NotContains(t, string(out), "epoch 1/1: train loss") // the epoch did not end
			t.Logf("ended in %v:\n%s", took.Round(time.Millisecond), out)
		})
	}
}
