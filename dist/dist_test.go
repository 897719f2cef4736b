package dist

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// onRanks runs f on every rank of an in-process group of size ranks and
// returns each rank's error.
func onRanks(t *testing.T, size int, timeout time.Duration, f func(c Comm) error) []error {
	t.Helper()
	comms, err := NewGroup(size, timeout)
	require.NoError(t, err)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() { errs[r] = f(c) })
	}
	wg.Wait()
	return errs
}

func TestGroupCollectives(t *testing.T) {
	for _, size := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(size, " ranks"), func(t *testing.T) {
			got := make([][]float64, size)
			gathered := make([][][]byte, size)
			bcast := make([][]byte, size)
			errs := onRanks(t, size, 5*time.Second, func(c Comm) error {
				r := c.Rank()
				f32 := []float32{float32(r), 1}
				f64 := []float64{float64(r) / 2, -1}
				b := []byte{byte(r), byte(r)}
				if err := c.AllreduceFloat32(f32); err != nil {
					return err
				}
				if err := c.AllreduceFloat64(f64); err != nil {
					return err
				}
				if err := c.Broadcast(b, size-1); err != nil {
					return err
				}
				all, err := c.Allgather(make([]byte, r)) // a different length on every rank
				if err != nil {
					return err
				}
				got[r] = []float64{float64(f32[0]), float64(f32[1]), f64[0], f64[1]}
				gathered[r], bcast[r] = all, b
				return c.Barrier()
			})
			sum := float64(size*(size-1)) / 2
			for r := range size {
				require.NoError(t, errs[r])
				assert.Equal(t, []float64{sum, float64(size), sum / 2, -float64(size)}, got[r])
				assert.Equal(t, []byte{byte(size - 1), byte(size - 1)}, bcast[r])
				require.Len(t, gathered[r], size)
				for from, b := range gathered[r] {
					assert.Len(t, b, from)
				}
			}
		})
	}
}

// A rank that never arrives makes the others' collective fail after the
// timeout with an error that says which rank waited, for what, and how
// long; later calls fail at once.
func TestGroupTimeout(t *testing.T) {
	comms, err := NewGroup(2, 100*time.Millisecond)
	require.NoError(t, err)
	start := time.Now()
	err = comms[0].AllreduceFloat32(make([]float32, 3))
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.EqualError(t, err, "dist: rank 0 of 2: allreduce float32 did not complete within 100ms (PLUMB_DIST_TIMEOUT): another rank died, hangs, or works alone longer than that")
	assert.ErrorContains(t, comms[0].Barrier(), "after an earlier collective failed")
}

func TestGroupMismatch(t *testing.T) {
	errs := onRanks(t, 2, 5*time.Second, func(c Comm) error {
		if c.Rank() == 0 {
			return c.Barrier()
		}
		return c.AllreduceFloat64(make([]float64, 2))
	})
	for _, err := range errs {
		assert.ErrorContains(t, err, "ranks disagree on the collective")
	}
	errs = onRanks(t, 2, 5*time.Second, func(c Comm) error { return c.AllreduceFloat64(make([]float64, 1+c.Rank())) })
	for _, err := range errs {
		assert.ErrorContains(t, err, "allreduce of 1 elements on rank 0 but 2 on rank 1")
	}
}

func TestTimeoutFromEnvironment(t *testing.T) {
	tests := []struct {
		env  string
		want time.Duration
		err  string
	}{
		{"", DefaultTimeout, ""},
		{"90s", 90 * time.Second, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{"soon", 0, `PLUMB_DIST_TIMEOUT="soon": want a duration`},
		{"-1s", 0, "want a positive duration"},
	}
	for _, tc := range tests {
		t.Setenv("PLUMB_DIST_TIMEOUT", tc.env)
		d, err := Timeout()
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, d)
	}
}

func TestOpenAlone(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	t.Setenv("PMI_SIZE", "")
	t.Setenv("PMIX_SIZE", "")
	if MPI {
		t.Skip("the MPI build's Open is tested under mpirun")
	}
	c, err := Open()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, []int{c.Rank(), c.Size()})
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	_, err = Open()
	assert.ErrorContains(t, err, "launched as one of 2 processes, but this binary was built without MPI")
}

// param returns a float32 parameter of shape with the given values.
func param(name string, vals []float32, shape ...int) *graph.Param {
	return graph.NewParam(name, tensor.MustFromSlice(vals, shape...))
}

// A step's gradients on two ranks of 1 and 3 examples: dense ones are
// weighted 1/4 and 3/4; a table sparse on both ranks stays sparse with the
// union of the rows; a table sparse on one rank and dense on the other
// becomes dense on both; a parameter only rank 0 has a gradient for counts
// as zero on rank 1; one without a gradient anywhere keeps none; a frozen
// one is left alone; the losses are averaged with the same weights.
func TestAverageGradients(t *testing.T) {
	ex := []int{1, 3}
	params := make([][]*graph.Param, 2)
	losses := make([]float64, 2)
	counts := make([]int, 2)
	errs := onRanks(t, 2, 5*time.Second, func(c Comm) error {
		r := c.Rank()
		f := float32(r)
		dense := param("dense", []float32{1, 2}, 2)
		dense.Grad = tensor.MustFromSlice([]float32{4 * f, 8 - 4*f}, 2)
		table := param("table", make([]float32, 8), 4, 2)
		table.SparseGrad = &graph.SparseRows{Rows: []int{r, 3}, Values: tensor.MustFromSlice([]float32{4, 4, 4 * f, 8}, 2, 2)}
		mixed := param("mixed", make([]float32, 4), 2, 2)
		if r == 0 {
			mixed.SparseGrad = &graph.SparseRows{Rows: []int{1}, Values: tensor.MustFromSlice([]float32{4, 8}, 1, 2)}
		} else {
			mixed.Grad = tensor.MustFromSlice([]float32{4, 4, 4, 4}, 2, 2)
		}
		only0 := param("only0", []float32{0}, 1)
		if r == 0 {
			only0.Grad = tensor.MustFromSlice([]float32{8}, 1)
		}
		none := param("none", []float32{0}, 1)
		frozen := graph.NewState("frozen", tensor.MustFromSlice([]float32{float32(r)}, 1))
		frozen.Grad = tensor.MustFromSlice([]float32{f}, 1)
		ps := []*graph.Param{dense, table, mixed, only0, none, frozen}
		params[r] = ps
		var err error
		losses[r], counts[r], err = NewReplicas(c, 8).AverageGradients(ps, float64(4*r), ex[r])
		return err
	})
	for r := range 2 {
		require.NoError(t, errs[r])
		assert.Equal(t, 4, counts[r])
		assert.Equal(t, 3.0, losses[r]) // (1·0 + 3·4) / 4
		ps := params[r]
		assert.Equal(t, []float32{3, 5}, ps[0].Grad.Float32s(), "dense: (1·[0 8] + 3·[4 4]) / 4")
		require.NotNil(t, ps[1].SparseGrad)
		assert.Nil(t, ps[1].Grad)
		assert.Equal(t, []int{0, 1, 3}, ps[1].SparseGrad.Rows)
		assert.Equal(t, []float32{1, 1, 3, 3, 3, 8}, ps[1].SparseGrad.Values.Float32s())
		assert.Nil(t, ps[2].SparseGrad)
		assert.Equal(t, []float32{3, 3, 4, 5}, ps[2].Grad.Float32s(), "mixed: rank 0's row 1 densified")
		assert.Equal(t, []float32{2}, ps[3].Grad.Float32s())
		assert.Nil(t, ps[4].Grad)
		assert.Nil(t, ps[4].SparseGrad)
		assert.Equal(t, []float32{float32(r)}, ps[5].Grad.Float32s(), "a frozen parameter's gradient is not touched")
	}
}

// SyncParams gives every rank rank 0's values in every dtype, across
// several buckets; AverageState averages the non-trainable floats only.
func TestSyncParamsAndAverageState(t *testing.T) {
	params := make([][]*graph.Param, 3)
	errs := onRanks(t, 3, 5*time.Second, func(c Comm) error {
		f := float64(c.Rank())
		ps := []*graph.Param{
			graph.NewParam("w", tensor.MustFromSlice([]float32{float32(f), 1, 2, 3, 4}, 5)),
			graph.NewParam("d", tensor.MustFromSlice([]float64{f, f}, 2)),
			graph.NewState("steps", tensor.MustFromSlice([]int64{int64(f)}, 1)),
			graph.NewState("mean", tensor.MustFromSlice([]float32{float32(3 * f)}, 1)),
		}
		params[c.Rank()] = ps
		rp := NewReplicas(c, 8) // 8 bytes: one bucket per parameter
		if err := rp.SyncParams(ps[:3]); err != nil {
			return err
		}
		return rp.AverageState(ps)
	})
	for r := range 3 {
		require.NoError(t, errs[r])
		ps := params[r]
		assert.Equal(t, []float32{0, 1, 2, 3, 4}, ps[0].Value.Float32s())
		assert.Equal(t, []float64{0, 0}, ps[1].Value.Float64s())
		assert.Equal(t, []int64{0}, ps[2].Value.Int64s(), "synced from rank 0, not averaged")
		assert.Equal(t, []float32{3}, ps[3].Value.Float32s(), "(0+3+6)/3")
	}
}

func TestShare(t *testing.T) {
	got := make([][]byte, 3)
	errs := onRanks(t, 3, 5*time.Second, func(c Comm) error {
		var err error
		got[c.Rank()], err = NewReplicas(c, 0).Share([]byte(fmt.Sprint("from rank ", c.Rank())))
		return err
	})
	for r := range 3 {
		require.NoError(t, errs[r])
		assert.Equal(t, "from rank 0", string(got[r]))
	}
}
