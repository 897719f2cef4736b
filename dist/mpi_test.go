//go:build mpi

package dist_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// roleEnv tells a test binary started by mpirun which rank program to run
// (see TestMain) instead of the tests.
const roleEnv = "PLUMB_DIST_TEST_ROLE"

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		if err := rankMain(role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			dist.Abort(1) // as plumb does: end the other ranks now
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mpirun runs this test binary as 2 ranks of role and returns the output,
// the exit error and how long it took. Without mpirun the test is skipped,
// unless PLUMB_REQUIRE_MPI is set (as CI does).
func mpirun(t *testing.T, role string, env ...string) (string, error, time.Duration) {
	t.Helper()
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		if os.Getenv("PLUMB_REQUIRE_MPI") != "" {
			t.Fatalf("mpirun not found and PLUMB_REQUIRE_MPI is set: %v", err)
		}
		t.Skip("mpirun not found (install openmpi-bin: dist/install-mpi.sh)")
	}
	cmd := exec.Command(bin, "--allow-run-as-root", "--oversubscribe", "-np", "2", os.Args[0])
	cmd.Env = append(append(os.Environ(), roleEnv+"="+role), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return string(out), err, time.Since(start)
}

// Two ranks train the MNIST MLP and CNN for a few steps on their shards of
// 640 digits; their parameters (and the CNN's batch norm statistics) end
// identical, bit for bit; their shards are disjoint and together the
// epoch's batches; and the MLP's weights match those of one process at the
// doubled batch, computed on each rank (see rankIdentical); an embedding
// table's sparse rows are gathered (sparseRows).
func TestMpirunIdenticalParameters(t *testing.T) {
	out, err, took := mpirun(t, "identical")
	require.NoError(t, err, out)
	assert.Equal(t, 2, strings.Count(out, "identical: ok"), out)
	t.Logf("2 ranks in %v:\n%s", took.Round(time.Millisecond), out)
}

// A rank that fails ends the other with an error that says so, within
// seconds. Killed (SIGKILL): mpirun sees the death and ends rank 0, whose
// SIGTERM handler says why. Hung (SIGSTOP: alive, connected, silent):
// rank 0's collective fails after PLUMB_DIST_TIMEOUT, rank 0 exits, and
// mpirun ends the job.
func TestMpirunFailingRankEndsTheOther(t *testing.T) {
	tests := []struct {
		role, timeout string
		within        time.Duration
		want          string // a regular expression
	}{
		// rank 0's own MPI call may fail before mpirun's SIGTERM arrives
		{"kill", "20s", 20 * time.Second, `dist: rank 0 of 2: ended by terminated \(SIGTERM\) from the launcher|rank 0: dist: MPI_\w+ failed`},
		{"hang", "3s", 30 * time.Second, `dist: rank 0 of 2: allreduce of 4 float32 did not complete within 3s \(PLUMB_DIST_TIMEOUT\)`},
	}
	for _, tc := range tests {
		t.Run(tc.role, func(t *testing.T) {
			out, err, took := mpirun(t, tc.role, "PLUMB_DIST_TIMEOUT="+tc.timeout)
			require.Error(t, err, out)
			assert.Less(t, took, tc.within, out)
			assert.Regexp(t, tc.want, out)
			assert.NotContains(t, out, "rank 0 finished", out)
			t.Logf("ended in %v:\n%s", took.Round(time.Millisecond), out)
		})
	}
}

// A rank that fails mid-run (here with an error of its own after some
// collectives, as bad data or a failed save would) aborts the job: the
// other rank, waiting in an allreduce under a one-minute watchdog, ends
// within seconds. Ranks that build different models stop in the trainer's
// first collective with an error naming the difference, on every rank,
// instead of one failing in MPI_Bcast (MPI_ERR_TRUNCATE) and the other
// waiting for the watchdog.
func TestMpirunRankErrorAbortsTheJob(t *testing.T) {
	tests := []struct {
		role, want string
	}{
		{"fail", "rank 1: bad data on purpose, after 3 steps"},
		{"models", `mlp on rank 0, cnn on rank 1: train: starting from rank 0's parameters: dist: the ranks disagree on parameter 0: rank 0 has "fc1/kernel" float32 [784 128], rank 1 has "conv1/kernel" float32 [20 1 5 5]`},
	}
	for _, tc := range tests {
		t.Run(tc.role, func(t *testing.T) {
			out, err, took := mpirun(t, tc.role, "PLUMB_DIST_TIMEOUT=60s")
			require.Error(t, err, out)
			assert.Less(t, took, 10*time.Second, out)
			assert.Contains(t, out, tc.want)
			assert.NotContains(t, out, "did not complete within")
			assert.NotContains(t, out, "rank 0 finished", out)
			t.Logf("ended in %v:\n%s", took.Round(time.Millisecond), out)
		})
	}
}

// rankMain is one rank's program.
func rankMain(role string) error {
	c, err := dist.Open()
	if err != nil {
		return err
	}
	switch role {
	case "identical":
		err = rankIdentical(c)
	case "kill", "hang", "fail":
		err = rankFail(c, role)
	case "models":
		err = rankModels(c)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		return fmt.Errorf("rank %d: %w", c.Rank(), err)
	}
	return c.Close()
}

func rankFail(c dist.Comm, role string) error {
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 1 && role == "fail" {
		for range 3 {
			if err := c.AllreduceFloat32(make([]float32, 4)); err != nil {
				return err
			}
		}
		return errors.New("bad data on purpose, after 3 steps")
	}
	if c.Rank() == 1 {
		sig := syscall.SIGKILL
		if role == "hang" {
			sig = syscall.SIGSTOP
		}
		return syscall.Kill(os.Getpid(), sig)
	}
	time.Sleep(200 * time.Millisecond)
	for range 100 {
		if err := c.AllreduceFloat32(make([]float32, 4)); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Println("rank 0 finished: the dead rank went unnoticed")
	return nil
}

// rankModels trains the MNIST MLP on rank 0 and the CNN on rank 1.
func rankModels(c dist.Comm) error {
	model := []string{"mlp", "cnn"}[c.Rank()%2]
	net, opt, err := newNet(model, 1)
	if err != nil {
		return err
	}
	trainSet, _, err := embedded.Load()
	if err != nil {
		return err
	}
	loader, err := data.NewLoader(trainSet.Take(images), local, data.Shuffle(3))
	if err != nil {
		return err
	}
	_, err = train.Run(train.Config[*data.Batch]{
		Params: net.Params(), Optimizer: opt, Train: loader, Epochs: 1, Replicas: dist.NewReplicas(c, 0),
		Loss: func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
			return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label")), b.Len()
		},
	})
	if err != nil {
		return fmt.Errorf("mlp on rank 0, cnn on rank 1: %w", err)
	}
	fmt.Println("rank", c.Rank(), "finished: the ranks trained different models")
	return nil
}

const (
	images = 640
	local  = 32 // batch per rank
)

// rankIdentical trains each model on this rank's shard and checks it
// against the other rank and, for the MLP, against one process.
func rankIdentical(c dist.Comm) error {
	trainSet, _, err := embedded.Load()
	if err != nil {
		return err
	}
	trainSet = trainSet.Take(images)
	rp := dist.NewReplicas(c, 1<<14) // small buckets: several per step
	for _, model := range []string{"mlp", "cnn"} {
		// Rank 1 starts from other weights: the broadcast must fix that.
		net, opt, err := newNet(model, uint64(1+c.Rank()))
		if err != nil {
			return err
		}
		whole, err := data.NewLoader(trainSet, local, data.Shuffle(3))
		if err != nil {
			return err
		}
		src, err := whole.Shard(c.Rank(), c.Size())
		if err != nil {
			return err
		}
		var rows []int64
		_, err = train.Run(train.Config[*data.Batch]{
			Params: net.Params(), Optimizer: opt, Train: src, Epochs: 1, Replicas: rp,
			Loss: func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
				for _, i := range b.Index() {
					rows = append(rows, int64(i))
				}
				return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label")), b.Len()
			},
		})
		if err != nil {
			return fmt.Errorf("%s: %w", model, err)
		}
		if err := sameOnAllRanks(c, model, net.Params()); err != nil {
			return err
		}
		if err := shardsPartitionTheEpoch(c, whole, rows); err != nil {
			return fmt.Errorf("%s: %w", model, err)
		}
		if model == "mlp" {
			if err := matchesOneProcess(trainSet, net.Params()); err != nil {
				return err
			}
		}
	}
	if err := sparseRows(rp); err != nil {
		return err
	}
	fmt.Printf("rank %d of %d: identical: ok\n", c.Rank(), c.Size())
	return nil
}

// sparseRows averages an embedding table's sparse gradient over the 2
// ranks (rows {0, 5} of rank 0 and {1, 5, 7} of rank 1, so the ranks send
// different lengths through MPI_Allgatherv) and checks the union.
func sparseRows(rp *dist.Replicas) error {
	table := graph.NewParam("table", tensor.Zeros(tensor.Float32, 8, 2))
	rows, vals := []int{0, 5}, []float32{2, 2, 4, 4}
	if rp.Rank() == 1 {
		rows, vals = []int{1, 5, 7}, []float32{6, 6, 8, 8, 10, 10}
	}
	table.SparseGrad = &graph.SparseRows{Rows: rows, Values: tensor.MustFromSlice(vals, len(rows), 2)}
	if _, _, err := rp.AverageGradients([]*graph.Param{table}, 1, 1); err != nil {
		return err
	}
	g := table.SparseGrad
	if g == nil || table.Grad != nil || !slices.Equal(g.Rows, []int{0, 1, 5, 7}) ||
		!slices.Equal(g.Values.Float32s(), []float32{1, 1, 3, 3, 6, 6, 5, 5}) {
		return fmt.Errorf("sparse rows: got %+v, dense %v; want rows [0 1 5 7] and values [1 1 3 3 6 6 5 5]", g, table.Grad)
	}
	return nil
}

func newNet(model string, seed uint64) (mnist.Model, optim.Optimizer, error) {
	net, err := mnist.New(model, tensor.NewRNG(seed))
	if err != nil {
		return nil, nil, err
	}
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	return net, opt, err
}

// sameOnAllRanks compares a digest of every parameter's bytes over the
// ranks.
func sameOnAllRanks(c dist.Comm, model string, ps []*graph.Param) error {
	h := sha256.New()
	for _, p := range ps {
		for _, v := range p.Value.Float32s() {
			h.Write([]byte{byte(math.Float32bits(v)), byte(math.Float32bits(v) >> 8), byte(math.Float32bits(v) >> 16), byte(math.Float32bits(v) >> 24)})
		}
	}
	all, err := c.Allgather(h.Sum(nil))
	if err != nil {
		return err
	}
	for r, d := range all {
		if !bytes.Equal(d, all[0]) {
			return fmt.Errorf("%s: the parameters of rank %d differ from rank 0's", model, r)
		}
	}
	return nil
}

// shardsPartitionTheEpoch checks that the rows the ranks trained on are
// disjoint and together those of the unsharded epoch.
func shardsPartitionTheEpoch(c dist.Comm, whole *data.Loader, mine []int64) error {
	all, err := c.Allgather(int64Bytes(mine))
	if err != nil {
		return err
	}
	var got []int
	for _, b := range all {
		for k := 0; k+8 <= len(b); k += 8 {
			var v int64
			for j := range 8 {
				v |= int64(b[k+j]) << (8 * j)
			}
			got = append(got, int(v))
		}
	}
	var want []int
	for _, batch := range whole.Order(0) { // the trainer's epoch 1
		want = append(want, batch...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("the ranks trained on %d rows, not the epoch's %d rows once each", len(got), len(want))
	}
	return nil
}

func int64Bytes(v []int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		for j := range 8 {
			b = append(b, byte(x>>(8*j)))
		}
	}
	return b
}

// matchesOneProcess trains the MLP in this process alone at batch
// 2·local from rank 0's seed and compares the weights.
func matchesOneProcess(ds *data.Dataset, got []*graph.Param) error {
	net, opt, err := newNet("mlp", 1)
	if err != nil {
		return err
	}
	loader, err := data.NewLoader(ds, 2*local, data.Shuffle(3))
	if err != nil {
		return err
	}
	_, err = train.Run(train.Config[*data.Batch]{
		Params: net.Params(), Optimizer: opt, Train: loader, Epochs: 1,
		Loss: func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
			return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label")), b.Len()
		},
	})
	if err != nil {
		return err
	}
	worst := 0.0
	for i, p := range net.Params() {
		for k, v := range p.Value.Float32s() {
			worst = max(worst, math.Abs(float64(v-got[i].Value.Float32s()[k])))
		}
	}
	if worst > 1e-4 {
		return fmt.Errorf("mlp: the 2-rank weights differ from one process's at batch %d by up to %g", 2*local, worst)
	}
	fmt.Printf("mlp: 2 ranks vs one process at batch %d: weights within %.2g\n", 2*local, worst)
	return nil
}
