// The tensor-core SGEMM: the sgemm kernel of gemm.cu (same parameters,
// same C = alpha·op(A)·op(B) + beta·C, batched over blockIdx.z) computed
// with TF32 warp matrix multiply-accumulate (wmma m16n16k8, precision
// tf32, float32 accumulation), which needs compute capability 8.0 or later:
// generate.sh compiles the *_sm80.cu files for compute_80, and the Device
// loads them only on such GPUs. TF32 keeps float32's exponent but rounds
// each input to a 10-bit mantissa (relative error up to 2^-11), so a
// product is within about 2^-10 of the float32 one: the kernel is opt-in
// (Device.SetTF32), as PyTorch's allow_tf32 is off by default for matmuls.
//
// Each 256-thread block computes a 128×128 tile of C, staging 128×16
// panels of op(A) and op(B), rounded to TF32, through shared memory
// (zero-filled past the edges, so any M, N, K work); each of the 8 warps
// owns a 64×32 sub-tile, 4×2 accumulator fragments of 16×16. The results
// pass through a per-warp 16×16 scratch tile to apply alpha, beta and
// the edges.
#include <mma.h>

#include "common.cuh"

using namespace nvcuda;

#define TM 128
#define TN 128
#define TK 16
#define THREADS 256
#define APAD 4  // row padding of the panels; keeps wmma's 32-byte alignment
#define SLD 20  // row stride of the scratch tiles

extern "C" __global__ void __launch_bounds__(THREADS)
    sgemm_tf32(i64 transA, i64 transB, i64 M, i64 N, i64 K, double alpha, const float* A, i64 lda, i64 strideA,
               i64 modA, const float* B, i64 ldb, i64 strideB, double beta, float* C, i64 ldc, i64 strideC) {
    __shared__ __align__(32) float As[TM][TK + APAD];  // op(A) panel, row-major m×k
    __shared__ __align__(32) float Bs[TK][TN + APAD];  // op(B) panel, row-major k×n
    __shared__ __align__(32) float Ss[THREADS / 32][16 * SLD];
    i64 z = blockIdx.z;
    A += (z % modA) * strideA;
    B += z * strideB;
    C += z * strideC;
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;  // the warp's sub-tile
    i64 m0 = (i64)blockIdx.y * TM, n0 = (i64)blockIdx.x * TN;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
    for (i64 k0 = 0; k0 < K; k0 += TK) {
        // Each thread stages 8 elements of each panel; consecutive threads
        // read consecutive addresses of whichever layout A and B have.
#pragma unroll
        for (int r = 0; r < TM * TK / THREADS; r++) {
            int e = tid + THREADS * r;
            int mm = transA ? e % TM : e / TK, ka = transA ? e / TM : e % TK;
            i64 gm = m0 + mm, gka = k0 + ka;
            float va = 0.f;
            if (gm < M && gka < K) va = transA ? A[gka * lda + gm] : A[gm * lda + gka];
            As[mm][ka] = wmma::__float_to_tf32(va);
            int nn = transB ? e / TK : e % TN, kb = transB ? e % TK : e / TN;
            i64 gn = n0 + nn, gkb = k0 + kb;
            float vb = 0.f;
            if (gn < N && gkb < K) vb = transB ? B[gn * ldb + gkb] : B[gkb * ldb + gn];
            Bs[kb][nn] = wmma::__float_to_tf32(vb);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 4; i++) wmma::load_matrix_sync(fa[i], &As[wm + 16 * i][kk], TK + APAD);
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &Bs[kk][wn + 16 * j], TN + APAD);
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }
    float al = (float)alpha, be = (float)beta;
    float* s = Ss[warp];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            wmma::store_matrix_sync(s, acc[i][j], SLD, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
                int r = e >> 4, c = e & 15;
                i64 gm = m0 + wm + 16 * i + r, gn = n0 + wn + 16 * j + c;
                if (gm < M && gn < N) {
                    float v = al * s[r * SLD + c];
                    if (be != 0.f) v += be * C[gm * ldc + gn];
                    C[gm * ldc + gn] = v;
                }
            }
            __syncwarp();  // the scratch is read before the next store
        }
}
