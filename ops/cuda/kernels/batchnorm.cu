// Batch normalisation over axis 1 (ops/batchnorm.go, Keras'
// BatchNormalization and TF's FusedBatchNorm / FusedBatchNormGrad): x is
// [n, c, hw], statistics are per channel over the n·hw elements of that
// channel. One block per channel computes its statistics or sums in double,
// as the CPU reference kernel does, then writes the channel's outputs, so
// nothing is shared between blocks and no atomics are needed.
#include "common.cuh"

// bn_fwd writes y = gamma·(x - mean)·inv_std + beta per channel and saves
// each channel's mean and inv_std = 1/sqrt(var + eps) (double). In training
// (training != 0) mean and var are the batch's, two passes in double with
// the biased variance, and the moving statistics rm, rv are updated in
// place: moving = moving·momentum + batch·(1 - momentum). Otherwise mean
// and var are rm and rv, which stay unchanged.
extern "C" __global__ void bn_fwd(const float* x, const float* gamma, const float* beta, float* rm, float* rv,
                                  float* y, double* mean_out, double* inv_std_out, i64 n, i64 c, i64 hw,
                                  i64 training, double momentum, double eps) {
    i64 m = n * hw;
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double mu = rm[ch], var = rv[ch];
        if (training) {
            double s = 0;
            for (i64 j = threadIdx.x; j < m; j += blockDim.x) s += x[((j / hw) * c + ch) * hw + j % hw];
            mu = block_reduce(s, SumOp(), 0.0) / (double)m;
            s = 0;
            for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
                double d = (double)x[((j / hw) * c + ch) * hw + j % hw] - mu;
                s += d * d;
            }
            var = block_reduce(s, SumOp(), 0.0) / (double)m;
        }
        double inv_std = 1.0 / sqrt(var + eps);
        if (threadIdx.x == 0) {
            mean_out[ch] = mu;
            inv_std_out[ch] = inv_std;
            if (training) {
                rm[ch] = (float)((double)rm[ch] * momentum + mu * (1 - momentum));
                rv[ch] = (float)((double)rv[ch] * momentum + var * (1 - momentum));
            }
        }
        double g = gamma[ch], b = beta[ch];
        for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
            i64 at = ((j / hw) * c + ch) * hw + j % hw;
            y[at] = (float)(g * ((double)x[at] - mu) * inv_std + b);
        }
    }
}

// bn_bwd writes, per channel with x̂ = (x - mean)·inv_std and m = n·hw,
// dgamma = Σ dy·x̂ and dbeta = Σ dy (each null when unwanted) and
//
//	dx = gamma·inv_std·(dy - (dbeta + x̂·dgamma)/m)   (training)
//	dx = gamma·inv_std·dy                           (inference)
//
// (null when unwanted), from the mean and inv_std bn_fwd saved.
extern "C" __global__ void bn_bwd(const float* x, const float* gamma, const float* dy, const double* mean,
                                  const double* inv_std, float* dx, float* dgamma, float* dbeta, i64 n, i64 c,
                                  i64 hw, i64 training) {
    i64 m = n * hw;
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double mu = mean[ch], is = inv_std[ch];
        double sg = 0, sgx = 0;
        for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
            i64 at = ((j / hw) * c + ch) * hw + j % hw;
            double d = dy[at];
            sg += d;
            sgx += d * ((double)x[at] - mu) * is;
        }
        sg = block_reduce(sg, SumOp(), 0.0);
        sgx = block_reduce(sgx, SumOp(), 0.0);
        if (threadIdx.x == 0) {
            if (dgamma) dgamma[ch] = (float)sgx;
            if (dbeta) dbeta[ch] = (float)sg;
        }
        if (!dx) continue;
        double k = (double)gamma[ch] * is;
        for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
            i64 at = ((j / hw) * c + ch) * hw + j % hw;
            double d = dy[at];
            if (training) d -= (sg + ((double)x[at] - mu) * is * sgx) / (double)m;
            dx[at] = (float)(k * d);
        }
    }
}
