// A tiled SGEMM: C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// batched over blockIdx.z. Each 256-thread block computes a 64×64 tile of
// C, staging 64×16 panels of op(A) and op(B) through shared memory; each
// thread accumulates a 4×4 block of the tile in float32 registers. Edges
// are handled by zero-filling the panels, so any M, N, K work.
#include "common.cuh"

#define BM 64
#define BN 64
#define BK 16
#define THREADS 256

// sgemm computes, for batch entry z = blockIdx.z, with op(A) M×K and
// op(B) K×N,
//
//	C_z = alpha·op(A_z)·op(B_z) + beta·C_z
//
// where A_z = A + (z mod modA)·strideA (modA lets a batch of images share
// each group's weights), B_z = B + z·strideB and C_z = C + z·strideC.
// With beta == 0, C is not read, so it need not be initialised.
extern "C" __global__ void __launch_bounds__(THREADS)
    sgemm(i64 transA, i64 transB, i64 M, i64 N, i64 K, double alpha, const float* A, i64 lda, i64 strideA,
          i64 modA, const float* B, i64 ldb, i64 strideB, double beta, float* C, i64 ldc, i64 strideC) {
    // One padding column keeps the panel stores free of bank conflicts.
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    i64 z = blockIdx.z;
    A += (z % modA) * strideA;
    B += z * strideB;
    C += z * strideC;
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    i64 m0 = (i64)blockIdx.y * BM, n0 = (i64)blockIdx.x * BN;
    float acc[4][4] = {};
    for (i64 k0 = 0; k0 < K; k0 += BK) {
        // Each thread stages 4 elements of each panel; consecutive threads
        // read consecutive addresses of whichever layout A and B have.
#pragma unroll
        for (int r = 0; r < BM * BK / THREADS; r++) {
            int e = tid + THREADS * r;
            int mm = transA ? e % BM : e / BK, ka = transA ? e / BM : e % BK;
            i64 gm = m0 + mm, gka = k0 + ka;
            float va = 0.f;
            if (gm < M && gka < K) va = transA ? A[gka * lda + gm] : A[gm * lda + gka];
            As[ka][mm] = va;
            int nn = transB ? e / BK : e % BN, kb = transB ? e % BK : e / BN;
            i64 gn = n0 + nn, gkb = k0 + kb;
            float vb = 0.f;
            if (gn < N && gkb < K) vb = transB ? B[gn * ldb + gkb] : B[gkb * ldb + gn];
            Bs[kb][nn] = vb;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    float al = (float)alpha, be = (float)beta;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        i64 gm = m0 + ty + 16 * i;
        if (gm >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            i64 gn = n0 + tx + 16 * j;
            if (gn >= N) continue;
            float v = al * acc[i][j];
            if (be != 0.f) v += be * C[gm * ldc + gn];
            C[gm * ldc + gn] = v;
        }
    }
}
