package dist_test

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// points returns 32 points on y = 2x + 1 as a dataset with fields x and y.
func points() *data.Dataset {
	xs, ys := make([]float32, 32), make([]float32, 32)
	for i := range xs {
		xs[i] = float32(i)/16 - 1
		ys[i] = 2*xs[i] + 1
	}
	ds, _ := data.NewDataset(data.DenseField("x", tensor.MustFromSlice(xs, 32, 1)),
		data.DenseField("y", tensor.MustFromSlice(ys, 32, 1)))
	return ds
}

// fit trains a linear model from seed on this rank's shard of the points
// and returns its weight and bias. Every rank runs the same code; the
// Replicas start them from rank 0's weights and average their gradients.
func fit(comm dist.Comm, seed uint64) ([]float32, error) {
	loader, err := data.NewLoader(points(), 4, data.Shuffle(1))
	if err != nil {
		return nil, err
	}
	shard, err := loader.Shard(comm.Rank(), comm.Size())
	if err != nil {
		return nil, err
	}
	model, _ := layers.NewLinear("fit", 1, 1, tensor.NewRNG(seed))
	opt, _ := optim.NewSGD(model.Params(), optim.LR(0.1))
	_, err = train.Run(train.Config[*data.Batch]{
		Params: model.Params(), Optimizer: opt, Train: shard, Epochs: 40,
		Replicas: dist.NewReplicas(comm, dist.DefaultBucketBytes),
		Loss: func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
			return graph.MSE(model.Forward(t.Const(b.Tensor("x"))), t.Const(b.Tensor("y"))), b.Len()
		},
	})
	if err != nil {
		return nil, err
	}
	return []float32{model.Params()[0].Value.Float32s()[0], model.Params()[1].Value.Float32s()[0]}, nil
}

// Data-parallel training as a program does it: Open joins the group the
// process was started in. Built with -tags mpi and started by mpirun, each
// process is one rank of many; otherwise it is the one-process group, and
// the same program trains alone.
func Example() {
	comm, err := dist.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	wb, err := fit(comm, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rank %d of %d: y = %.2fx + %.2f\n", comm.Rank(), comm.Size(), wb[0], wb[1])
	// Output: rank 0 of 1: y = 2.00x + 1.00
}

// Two ranks in one process, each on its own goroutine, as the tests run
// data-parallel code without mpirun. The ranks start from different seeds,
// but rank 0's weights reach both and every step averages their gradients,
// so they end with the same model.
func ExampleNewGroup() {
	comms, err := dist.NewGroup(2, time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	results := make([][]float32, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, comm := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer comm.Close()
			results[r], errs[r] = fit(comm, uint64(1+r))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("y = %.2fx + %.2f\n", results[0][0], results[0][1])
	fmt.Println("ranks agree:", slices.Equal(results[0], results[1]))
	// Output:
	// y = 2.00x + 1.00
	// ranks agree: true
}
