// Row-wise softmax, log-softmax and softmax cross-entropy (ops/softmax.go,
// ops/softmax_cross_entropy.go), forward and backward, one block per row.
// Every row subtracts its maximum before exponentiating, and sums in
// double.
#include "common.cuh"

// A row of softmax over [outer, n, inner] along the middle axis starts at
// (r / inner)·n·inner + r % inner and steps by inner.
__device__ __forceinline__ i64 row_base(i64 r, i64 n, i64 inner) { return (r / inner) * n * inner + r % inner; }

// row_lse returns the maximum m of the row and log Σ exp(x - m).
__device__ void row_lse(const float* x, i64 base, i64 n, i64 stride, float* m, float* ls) {
    float mx = -INFINITY;
    for (i64 k = threadIdx.x; k < n; k += blockDim.x) mx = gmax(mx, x[base + k * stride]);
    mx = block_reduce(mx, MaxOp(), -INFINITY);
    double s = 0;
    for (i64 k = threadIdx.x; k < n; k += blockDim.x) s += expf(x[base + k * stride] - mx);
    s = block_reduce(s, SumOp(), 0.0);
    *m = mx;
    *ls = (float)log(s);
}

// softmax_fwd writes softmax, or with logsm the log-softmax
// (x - m) - log Σ exp(x - m), of x along the middle axis of [outer, n, inner].
extern "C" __global__ void softmax_fwd(const float* x, float* y, i64 outer, i64 n, i64 inner, i64 logsm) {
    for (i64 r = blockIdx.x; r < outer * inner; r += gridDim.x) {
        i64 base = row_base(r, n, inner);
        float m, ls;
        row_lse(x, base, n, inner, &m, &ls);
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) {
            i64 j = base + k * inner;
            float v = (x[j] - m) - ls;
            y[j] = logsm ? v : expf(v);
        }
    }
}

// softmax_bwd writes dx = y·(dy - Σ dy·y) for softmax, or
// dx = dy - exp(y)·Σ dy for log-softmax, from the forward output y.
extern "C" __global__ void softmax_bwd(const float* y, const float* dy, float* dx, i64 outer, i64 n, i64 inner,
                                       i64 logsm) {
    for (i64 r = blockIdx.x; r < outer * inner; r += gridDim.x) {
        i64 base = row_base(r, n, inner);
        double s = 0;
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) {
            i64 j = base + k * inner;
            s += logsm ? (double)dy[j] : (double)dy[j] * y[j];
        }
        float sf = (float)block_reduce(s, SumOp(), 0.0);
        for (i64 k = threadIdx.x; k < n; k += blockDim.x) {
            i64 j = base + k * inner;
            dx[j] = logsm ? dy[j] - expf(y[j]) * sf : y[j] * (dy[j] - sf);
        }
    }
}

// neg_log_softmax is (m - z) + ls, summed in that order so that very
// negative rows keep their small differences (as ops' negLogSoftmax).
__device__ __forceinline__ float neg_log_softmax(float m, float ls, float z) { return (m - z) + ls; }

// xent_fwd computes, for logits z [n, c], each row's max and log-sum-exp
// (saved for the backward pass) and its loss: (m - z[label]) + ls with
// integer labels (soft == null), or Σ_j y_j·((m - z_j) + ls) with soft
// labels y [n, c].
extern "C" __global__ void xent_fwd(const float* z, const int* labels, const float* soft, i64 n, i64 c,
                                    float* row_max, float* log_sum, float* loss) {
    for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
        float m, ls;
        row_lse(z, i * c, c, 1, &m, &ls);
        if (soft) {
            double s = 0;
            for (i64 j = threadIdx.x; j < c; j += blockDim.x)
                s += (double)soft[i * c + j] * neg_log_softmax(m, ls, z[i * c + j]);
            s = block_reduce(s, SumOp(), 0.0);
            if (threadIdx.x == 0) loss[i] = (float)s;
        } else if (threadIdx.x == 0) {
            loss[i] = neg_log_softmax(m, ls, z[i * c + labels[i]]);
        }
        if (threadIdx.x == 0) {
            row_max[i] = m;
            log_sum[i] = ls;
        }
    }
}

// xent_bwd writes, with w_i the upstream gradient reaching row i (gout[i]
// when per_row, else gout[0]·scale), dz = w·(p·Σy - y) where p = softmax(z)
// and y is the soft labels or the one-hot of the integer labels, and for
// soft labels dy = w·(-log p). dz or dy is null when unwanted.
extern "C" __global__ void xent_bwd(const float* z, const int* labels, const float* soft, i64 n, i64 c,
                                    const float* row_max, const float* log_sum, const float* gout, i64 per_row,
                                    double scale, float* dz, float* dy) {
    for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
        float w = per_row ? gout[i] : (float)(gout[0] * scale);
        float mass = 1.f;
        if (soft) {
            double s = 0;
            for (i64 j = threadIdx.x; j < c; j += blockDim.x) s += soft[i * c + j];
            mass = (float)block_reduce(s, SumOp(), 0.0);
        }
        float m = row_max[i], ls = log_sum[i];
        for (i64 j = threadIdx.x; j < c; j += blockDim.x) {
            float nl = neg_log_softmax(m, ls, z[i * c + j]);
            if (dz) {
                float d = expf(-nl) * mass;
                if (soft) d -= soft[i * c + j];
                else if (j == labels[i]) d -= 1.f;
                dz[i * c + j] = w * d;
            }
            if (dy) dy[i * c + j] = w * nl;
        }
    }
}

// sum_all writes out[0] = scale·Σ x[0:n] with one block, summing in double;
// for n == 0 it writes 0 (a mean over an empty batch is 0, as in ops).
extern "C" __global__ void sum_all(const float* x, float* out, i64 n, double scale) {
    double s = 0;
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
    s = block_reduce(s, SumOp(), 0.0);
    if (threadIdx.x == 0) out[0] = (float)(s * scale);
}
