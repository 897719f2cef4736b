// Shared helpers of Plumb's CUDA kernels. Every kernel parameter is 8 bytes
// (a pointer, long long or double) because gorgonia.org/cu copies each
// launch parameter as 8 bytes; scalars arrive as double and are rounded
// to float where the kernel computes in float.
#pragma once

typedef long long i64;

// A grid-stride loop over [0, n), so any grid covers any size.
#define FOR_EACH(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// gmax and gmin are Go's math.Max and math.Min: a NaN operand gives NaN,
// where fmaxf and fminf would return the other operand.
__device__ __forceinline__ float gmax(float a, float b) {
    return (isnan(a) || isnan(b)) ? nanf("") : fmaxf(a, b);
}
__device__ __forceinline__ float gmin(float a, float b) {
    return (isnan(a) || isnan(b)) ? nanf("") : fminf(a, b);
}

struct MaxOp {
    __device__ float operator()(float a, float b) const { return gmax(a, b); }
};
struct SumOp {
    __device__ double operator()(double a, double b) const { return a + b; }
};

// block_reduce combines v over the block with op and returns the result to
// every thread. blockDim.x must be a multiple of 32 and at most 1024; all
// threads of the block must call it.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
    __shared__ T part[32];
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // part may still be read by a previous call
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = (int)threadIdx.x < (int)(blockDim.x >> 5) ? part[threadIdx.x] : identity;
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}

