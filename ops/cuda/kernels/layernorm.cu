// Layer normalisation (ops/layernorm.go, Keras' LayerNormalization) over
// rows of d elements: y = gamma·(x - mean)/sqrt(var + eps) + beta with the
// mean and biased variance of each row, in two passes and in double as
// ops' kernel. The forward saves each row's mean and 1/sqrt(var + eps) in
// double for the backward pass.
#include "common.cuh"

// ln_fwd normalises each row of x [rows, d] into y, one block per row.
extern "C" __global__ void ln_fwd(const float* x, const float* gamma, const float* beta, float* y, double* mean,
                                  double* inv_std, i64 rows, i64 d, double eps) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * d;
        double s = 0;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) s += xr[j];
        double mu = block_reduce(s, SumOp(), 0.0) / (double)d;
        double v = 0;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) {
            double e = xr[j] - mu;
            v += e * e;
        }
        double inv = 1.0 / sqrt(block_reduce(v, SumOp(), 0.0) / (double)d + eps);
        for (i64 j = threadIdx.x; j < d; j += blockDim.x)
            y[r * d + j] = (float)((double)gamma[j] * (xr[j] - mu) * inv + (double)beta[j]);
        if (threadIdx.x == 0) {
            mean[r] = mu;
            inv_std[r] = inv;
        }
    }
}

// ln_bwd_dx writes, per row with x̂ = (x - mean)·inv_std and g = dy·gamma,
// dx = inv_std·(g - Σg/d - x̂·Σ(g·x̂)/d); one block per row.
extern "C" __global__ void ln_bwd_dx(const float* x, const float* gamma, const float* dy, const double* mean,
                                     const double* inv_std, float* dx, i64 rows, i64 d) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        double mu = mean[r], inv = inv_std[r], sg = 0, sgx = 0;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) {
            double g = (double)dy[r * d + j] * gamma[j];
            sg += g;
            sgx += g * ((x[r * d + j] - mu) * inv);
        }
        sg = block_reduce(sg, SumOp(), 0.0) / (double)d;
        sgx = block_reduce(sgx, SumOp(), 0.0) / (double)d;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) {
            double xh = (x[r * d + j] - mu) * inv, g = (double)dy[r * d + j] * gamma[j];
            dx[r * d + j] = (float)(inv * (g - sg - xh * sgx));
        }
    }
}

// LN_TILE columns by LN_LANES row lanes make one block of ln_param_part.
#define LN_TILE 32
#define LN_LANES 8

// ln_param_part sums dy·x̂ and dy over one chunk of rows for a tile of
// LN_TILE columns: block (LN_TILE, LN_LANES), grid (column tiles, chunks),
// chunk blockIdx.y being rows [y·chunk, (y+1)·chunk). Threads of a warp
// read adjacent columns of one row. It writes the chunk's partial sums to
// part_g and part_b [chunks, d], in double; ln_param_sum adds the chunks.
extern "C" __global__ void ln_param_part(const float* x, const float* dy, const double* mean, const double* inv_std,
                                         double* part_g, double* part_b, i64 rows, i64 d, i64 chunk) {
    __shared__ double sg[LN_LANES][LN_TILE + 1], sb[LN_LANES][LN_TILE + 1];
    i64 col = (i64)blockIdx.x * LN_TILE + threadIdx.x;
    i64 lo = (i64)blockIdx.y * chunk, hi = min(rows, lo + chunk);
    double g = 0, b = 0;
    if (col < d) {
        for (i64 r = lo + threadIdx.y; r < hi; r += LN_LANES) {
            double v = dy[r * d + col];
            g += v * ((x[r * d + col] - mean[r]) * inv_std[r]);
            b += v;
        }
    }
    sg[threadIdx.y][threadIdx.x] = g;
    sb[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.y == 0 && col < d) {
        for (int k = 1; k < LN_LANES; k++) {
            g += sg[k][threadIdx.x];
            b += sb[k][threadIdx.x];
        }
        part_g[blockIdx.y * d + col] = g;
        part_b[blockIdx.y * d + col] = b;
    }
}

// ln_param_sum writes dgamma[j] = Σ_chunks part_g[·, j] and dbeta[j] =
// Σ_chunks part_b[·, j]; either output may be null.
extern "C" __global__ void ln_param_sum(const double* part_g, const double* part_b, float* dgamma, float* dbeta,
                                        i64 chunks, i64 d) {
    FOR_EACH(j, d) {
        double g = 0, b = 0;
        for (i64 k = 0; k < chunks; k++) {
            g += part_g[k * d + j];
            b += part_b[k * d + j];
        }
        if (dgamma) dgamma[j] = (float)g;
        if (dbeta) dbeta[j] = (float)b;
    }
}

// rms_fwd is RMS normalisation (ops/rms_norm.go, Keras' RMSNormalization):
// y = gamma·x·inv with inv = 1/sqrt(mean(x²) + eps) of each row of x
// [rows, d], in double; one block per row. It saves inv in inv_std, so
// that ln_param_part, given zero means, sums dgamma = Σ_rows dy·x·inv.
extern "C" __global__ void rms_fwd(const float* x, const float* gamma, float* y, double* inv_std, i64 rows, i64 d,
                                   double eps) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * d;
        double s = 0;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) s += (double)xr[j] * xr[j];
        double inv = 1.0 / sqrt(block_reduce(s, SumOp(), 0.0) / (double)d + eps);
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) y[r * d + j] = (float)((double)gamma[j] * xr[j] * inv);
        if (threadIdx.x == 0) inv_std[r] = inv;
    }
}

// rms_bwd_dx writes, per row with x̂ = x·inv and g = dy·gamma,
// dx = inv·(g - x̂·Σ(g·x̂)/d): ln_bwd_dx without the mean's term.
extern "C" __global__ void rms_bwd_dx(const float* x, const float* gamma, const float* dy, const double* inv_std,
                                      float* dx, i64 rows, i64 d) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        double inv = inv_std[r], sgx = 0;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) sgx += (double)dy[r * d + j] * gamma[j] * (x[r * d + j] * inv);
        sgx = block_reduce(sgx, SumOp(), 0.0) / (double)d;
        for (i64 j = threadIdx.x; j < d; j += blockDim.x) {
            double g = (double)dy[r * d + j] * gamma[j];
            dx[r * d + j] = (float)(inv * (g - x[r * d + j] * inv * sgx));
        }
    }
}
