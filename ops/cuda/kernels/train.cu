// Bookkeeping kernels of a training loop on the device (ops/cuda's
// MNISTCNN), so the host reads the loss and the test accuracy only when it
// reports them, not after every batch.
#include "common.cuh"

// loss_acc adds the scalar loss[0] to the double accumulator acc[0]; one
// thread.
extern "C" __global__ void loss_acc(const float* loss, double* acc) {
    if (blockIdx.x == 0 && threadIdx.x == 0) acc[0] += loss[0];
}

// eval_acc adds to stats[0] the number of rows of z [n, c] whose first
// maximum is at the label (ops.Accuracy's argmax), and to stats[1] the sum
// of the rows' losses loss [n]; one block.
extern "C" __global__ void eval_acc(const float* z, const int* labels, const float* loss, i64 n, i64 c,
                                    double* stats) {
    double hits = 0, s = 0;
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
        const float* row = z + i * c;
        i64 best = 0;
        for (i64 j = 1; j < c; j++)
            if (row[j] > row[best]) best = j;
        hits += best == labels[i] ? 1.0 : 0.0;
        s += loss[i];
    }
    hits = block_reduce(hits, SumOp(), 0.0);
    s = block_reduce(s, SumOp(), 0.0);
    if (threadIdx.x == 0) {
        stats[0] += hits;
        stats[1] += s;
    }
}
