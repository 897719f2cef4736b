// Sequence softmax over a ragged batch (ops/sequence_softmax.go, Paddle's
// sequence_softmax): values x [total] with offsets [B+1], the softmax taken
// over the steps of each sequence, one block per sequence. As softmax.cu,
// it subtracts the sequence's maximum first and sums in double. An empty
// sequence has no steps and its block does nothing. The other sequence ops
// move rows with the kernels of rows.cu.
#include "common.cuh"

// seqsoftmax_fwd writes y = exp((x - m) - log Σ exp(x - m)) per sequence.
extern "C" __global__ void seqsoftmax_fwd(const float* x, const i64* off, float* y, i64 batch) {
    for (i64 b = blockIdx.x; b < batch; b += gridDim.x) {
        i64 s = off[b], n = off[b + 1] - s;
        if (n == 0) continue;  // uniform over the block: no block_reduce is skipped by some threads only
        float m = -INFINITY;
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) m = gmax(m, x[s + k]);
        m = block_reduce(m, MaxOp(), -INFINITY);
        double sum = 0;
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) sum += expf(x[s + k] - m);
        float ls = (float)log(block_reduce(sum, SumOp(), 0.0));
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) y[s + k] = expf((x[s + k] - m) - ls);
    }
}

// seqsoftmax_bwd writes dx = y·(dy - Σ dy·y) per sequence from the forward
// output y.
extern "C" __global__ void seqsoftmax_bwd(const float* y, const float* dy, const i64* off, float* dx, i64 batch) {
    for (i64 b = blockIdx.x; b < batch; b += gridDim.x) {
        i64 s = off[b], n = off[b + 1] - s;
        if (n == 0) continue;
        double sum = 0;
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) sum += (double)dy[s + k] * y[s + k];
        float sf = (float)block_reduce(sum, SumOp(), 0.0);
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) dx[s + k] = y[s + k] * (dy[s + k] - sf);
    }
}
