// Fused scaled dot-product attention of ops/attention.go, flash-style
// (FlashAttention-2, Dao 2023): out = softmax(scale·Q·Kᵀ over the allowed
// keys)·V per (batch, head), with the online softmax (Milakov & Gimelshein
// 2018) over tiles of keys, so memory stays linear in the sequence length.
// The forward pass saves only each query's log-sum-exp L = m + log Σ
// exp(s - m); the backward pass recomputes P = exp(s - L) tile by tile:
//
//	Dᵢ = Σ_c dOᵢc·Oᵢc        dP = dO·Vᵀ      dS = P∘(dP - D)
//	dV = Pᵀ·dO               dK = scale·dSᵀ·Q      dQ = scale·dS·K
//
// with one kernel parallel over key tiles for dK and dV and one parallel
// over query tiles for dQ, so no sum crosses blocks (FlashAttention-2's
// dQ atomics traded for a second recomputation of P).
//
// Layout: q [BH, Tq, d], k [BH, Tk, d], v [BH, Tk, dv], out [BH, Tq, dv]
// row-major, head h of batch element b at bh = b·heads + h. A key j is
// allowed for query i of batch element b when j < klen[b] (klen may be
// null), mask[b·Tk + j] != 0 (mask may be null) and, if causal, j <= i.
// A query with no allowed key outputs zeros, L = +∞, and gets no gradient.
//
// A block of 4·TILE threads owns TILE rows (queries, or keys for dK/dV),
// four threads per row: thread (row, sub) computes the scores of the
// inner-tile items sub, sub+4, ... and accumulates the output columns
// sub, sub+4, ... of its row; scores reach the row's other threads by warp
// shuffles. Tiles sit in shared memory with one padding column, so the
// rows a warp reads at once fall in distinct banks. Head dims up to D are
// served, zero-filled past d and dv: D = 64 with 32-row tiles and D = 128
// with 16-row tiles (33 KB of shared memory either way).
#include "common.cuh"

#define FULL 0xffffffffu

struct AttnMask {
    const i64* klen;
    const float* mask;
    i64 causal, tk;
    // end returns the first key that no query below i_end may attend in
    // batch element b: Tk cut by the key length and, causally, by i_end.
    __device__ i64 end(i64 b, i64 i_end) const {
        i64 e = tk;
        if (klen) e = min(e, klen[b]);
        if (causal) e = min(e, i_end);
        return e;
    }
    __device__ bool ok(i64 b, i64 i, i64 j, i64 kend) const {
        return j < kend && (!mask || mask[b * tk + j] != 0.f) && (!causal || j <= i);
    }
};

// load_tile copies rows [r0, r0 + TILE) (those below n) of the row-major
// [n, w] matrix src into the tile, zero-filling missing rows and columns.
template <int D, int TILE>
__device__ __forceinline__ void load_tile(float (*dst)[D + 1], const float* src, i64 r0, i64 n, i64 w) {
    for (int e = threadIdx.x; e < TILE * D; e += 4 * TILE) {
        int r = e / D, c = e % D;
        dst[r][c] = (r0 + r < n && c < w) ? src[(r0 + r) * w + c] : 0.f;
    }
}

// row_dots writes out[n] = Σ_{c<w} a[c]·B[sub + 4n][c] for n < NS: the
// dot products of this thread's row a with its NS rows of the tile B,
// each element of a loaded once for all of them.
template <int D, int NS>
__device__ __forceinline__ void row_dots(const float* a, const float (*B)[D + 1], int sub, i64 w, float* out) {
#pragma unroll
    for (int n = 0; n < NS; n++) out[n] = 0.f;
#pragma unroll 4
    for (int c = 0; c < w; c++) {
        float av = a[c];
#pragma unroll
        for (int n = 0; n < NS; n++) out[n] = fmaf(av, B[sub + 4 * n][c], out[n]);
    }
}

template <int D, int TILE>
__device__ void attn_fwd(const float* Q, const float* K, const float* V, float* O, float* L, AttnMask mk, i64 heads,
                         i64 tq, i64 d, i64 dv, float scale) {
    constexpr int NS = TILE / 4, ND = D / 4;
    __shared__ float Qs[TILE][D + 1], Ks[TILE][D + 1], Vs[TILE][D + 1];
    i64 ntiles = (tq + TILE - 1) / TILE, tk = mk.tk;
    i64 bh = blockIdx.x / ntiles, i0 = (blockIdx.x % ntiles) * TILE, b = bh / heads;
    int row = threadIdx.x >> 2, sub = threadIdx.x & 3, lane = threadIdx.x & 31;
    i64 i = i0 + row;
    Q += bh * tq * d;
    K += bh * tk * d;
    V += bh * tk * dv;
    load_tile<D, TILE>(Qs, Q, i0, tq, d);
    i64 kend = mk.end(b, i0 + TILE);
    float m = -INFINITY, l = 0.f, acc[ND];
#pragma unroll
    for (int c = 0; c < ND; c++) acc[c] = 0.f;
    for (i64 j0 = 0; j0 < kend; j0 += TILE) {
        __syncthreads();  // the previous tile is no longer read
        load_tile<D, TILE>(Ks, K, j0, tk, d);
        load_tile<D, TILE>(Vs, V, j0, tk, dv);
        __syncthreads();
        float p[NS], tmax = -INFINITY;
        row_dots<D, NS>(Qs[row], Ks, sub, d, p);
#pragma unroll
        for (int n = 0; n < NS; n++) {
            bool ok = i < tq && mk.ok(b, i, j0 + sub + 4 * n, kend);
            p[n] = ok ? scale * p[n] : -INFINITY;
            tmax = fmaxf(tmax, p[n]);
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(FULL, tmax, 1));
        tmax = fmaxf(tmax, __shfl_xor_sync(FULL, tmax, 2));
        float mnew = fmaxf(m, tmax), corr = 1.f, psum = 0.f;
        if (mnew != -INFINITY) {
            corr = expf(m - mnew);  // 0 while m is -∞
#pragma unroll
            for (int n = 0; n < NS; n++) {
                p[n] = p[n] == -INFINITY ? 0.f : expf(p[n] - mnew);
                psum += p[n];
            }
            m = mnew;
        } else {
#pragma unroll
            for (int n = 0; n < NS; n++) p[n] = 0.f;
        }
        psum += __shfl_xor_sync(FULL, psum, 1);
        psum += __shfl_xor_sync(FULL, psum, 2);
        l = l * corr + psum;
#pragma unroll
        for (int c = 0; c < ND; c++) acc[c] *= corr;
#pragma unroll
        for (int jj = 0; jj < TILE; jj++) {
            float pj = __shfl_sync(FULL, p[jj >> 2], (lane & ~3) | (jj & 3));
#pragma unroll
            for (int c = 0; c < ND; c++) acc[c] = fmaf(pj, Vs[jj][sub + 4 * c], acc[c]);
        }
    }
    if (i >= tq) return;
    float inv = l > 0.f ? 1.f / l : 0.f;
    O += (bh * tq + i) * dv;
#pragma unroll
    for (int c = 0; c < ND; c++)
        if (sub + 4 * c < dv) O[sub + 4 * c] = acc[c] * inv;
    if (sub == 0) L[bh * tq + i] = l > 0.f ? m + logf(l) : INFINITY;
}

// attn_bwd_dkdv: a block per (batch·head, tile of keys), looping over the
// query tiles that may attend them.
template <int D, int TILE>
__device__ void attn_bwd_dkdv(const float* Q, const float* K, const float* V, const float* dO, const float* L,
                              const float* Dv, float* dK, float* dV, AttnMask mk, i64 heads, i64 tq, i64 d, i64 dv,
                              float scale) {
    constexpr int NS = TILE / 4, ND = D / 4;
    __shared__ float Ks[TILE][D + 1], Vs[TILE][D + 1], Qs[TILE][D + 1], dOs[TILE][D + 1];
    __shared__ float Ls[TILE], Ds[TILE];
    i64 tk = mk.tk, ntiles = (tk + TILE - 1) / TILE;
    i64 bh = blockIdx.x / ntiles, j0 = (blockIdx.x % ntiles) * TILE, b = bh / heads;
    int row = threadIdx.x >> 2, sub = threadIdx.x & 3, lane = threadIdx.x & 31;
    i64 j = j0 + row;
    Q += bh * tq * d;
    dO += bh * tq * dv;
    L += bh * tq;
    Dv += bh * tq;
    K += bh * tk * d;
    V += bh * tk * dv;
    load_tile<D, TILE>(Ks, K, j0, tk, d);
    load_tile<D, TILE>(Vs, V, j0, tk, dv);
    float gk[ND], gv[ND];
#pragma unroll
    for (int c = 0; c < ND; c++) gk[c] = gv[c] = 0.f;
    // Keys at or past the key length get nothing; causally, queries
    // before j0 attend none of these keys.
    i64 kend = mk.end(b, tk), istart = mk.causal ? j0 / TILE * TILE : 0;
    if (j0 >= kend) istart = tq;
    for (i64 i0 = istart; i0 < tq; i0 += TILE) {
        __syncthreads();
        load_tile<D, TILE>(Qs, Q, i0, tq, d);
        load_tile<D, TILE>(dOs, dO, i0, tq, dv);
        if (threadIdx.x < TILE) {
            bool in = i0 + threadIdx.x < tq;
            Ls[threadIdx.x] = in ? L[i0 + threadIdx.x] : INFINITY;
            Ds[threadIdx.x] = in ? Dv[i0 + threadIdx.x] : 0.f;
        }
        __syncthreads();
        float p[NS], ds[NS];
        row_dots<D, NS>(Ks[row], Qs, sub, d, p);
        row_dots<D, NS>(Vs[row], dOs, sub, dv, ds);
#pragma unroll
        for (int n = 0; n < NS; n++) {
            int ii = sub + 4 * n;
            i64 i = i0 + ii;
            if (j < tk && i < tq && mk.ok(b, i, j, kend)) {
                p[n] = expf(scale * p[n] - Ls[ii]);
                ds[n] = p[n] * (ds[n] - Ds[ii]);
            } else {
                p[n] = ds[n] = 0.f;
            }
        }
#pragma unroll
        for (int ii = 0; ii < TILE; ii++) {
            int src = (lane & ~3) | (ii & 3);
            float pi = __shfl_sync(FULL, p[ii >> 2], src), dsi = __shfl_sync(FULL, ds[ii >> 2], src);
#pragma unroll
            for (int c = 0; c < ND; c++) {
                gv[c] = fmaf(pi, dOs[ii][sub + 4 * c], gv[c]);
                gk[c] = fmaf(dsi, Qs[ii][sub + 4 * c], gk[c]);
            }
        }
    }
    if (j >= tk) return;
#pragma unroll
    for (int c = 0; c < ND; c++) {
        int col = sub + 4 * c;
        if (col < d) dK[(bh * tk + j) * d + col] = scale * gk[c];
        if (col < dv) dV[(bh * tk + j) * dv + col] = gv[c];
    }
}

// attn_bwd_dq: a block per (batch·head, tile of queries), looping over the
// key tiles as the forward pass does.
template <int D, int TILE>
__device__ void attn_bwd_dq(const float* Q, const float* K, const float* V, const float* dO, const float* L,
                            const float* Dv, float* dQ, AttnMask mk, i64 heads, i64 tq, i64 d, i64 dv, float scale) {
    constexpr int NS = TILE / 4, ND = D / 4;
    __shared__ float Qs[TILE][D + 1], dOs[TILE][D + 1], Ks[TILE][D + 1], Vs[TILE][D + 1];
    i64 ntiles = (tq + TILE - 1) / TILE, tk = mk.tk;
    i64 bh = blockIdx.x / ntiles, i0 = (blockIdx.x % ntiles) * TILE, b = bh / heads;
    int row = threadIdx.x >> 2, sub = threadIdx.x & 3, lane = threadIdx.x & 31;
    i64 i = i0 + row;
    Q += bh * tq * d;
    dO += bh * tq * dv;
    K += bh * tk * d;
    V += bh * tk * dv;
    load_tile<D, TILE>(Qs, Q, i0, tq, d);
    load_tile<D, TILE>(dOs, dO, i0, tq, dv);
    float li = i < tq ? L[bh * tq + i] : INFINITY, di = i < tq ? Dv[bh * tq + i] : 0.f;
    float gq[ND];
#pragma unroll
    for (int c = 0; c < ND; c++) gq[c] = 0.f;
    i64 kend = mk.end(b, i0 + TILE);
    for (i64 j0 = 0; j0 < kend; j0 += TILE) {
        __syncthreads();
        load_tile<D, TILE>(Ks, K, j0, tk, d);
        load_tile<D, TILE>(Vs, V, j0, tk, dv);
        __syncthreads();
        float s[NS], ds[NS];
        row_dots<D, NS>(Qs[row], Ks, sub, d, s);
        row_dots<D, NS>(dOs[row], Vs, sub, dv, ds);
#pragma unroll
        for (int n = 0; n < NS; n++) {
            if (i < tq && mk.ok(b, i, j0 + sub + 4 * n, kend))
                ds[n] = expf(scale * s[n] - li) * (ds[n] - di);
            else
                ds[n] = 0.f;
        }
#pragma unroll
        for (int jj = 0; jj < TILE; jj++) {
            float dsj = __shfl_sync(FULL, ds[jj >> 2], (lane & ~3) | (jj & 3));
#pragma unroll
            for (int c = 0; c < ND; c++) gq[c] = fmaf(dsj, Ks[jj][sub + 4 * c], gq[c]);
        }
    }
    if (i >= tq) return;
#pragma unroll
    for (int c = 0; c < ND; c++)
        if (sub + 4 * c < d) dQ[(bh * tq + i) * d + sub + 4 * c] = scale * gq[c];
}

// The entry points: _64 for head dims up to 64 (blocks of 128 threads),
// _128 up to 128 (blocks of 64 threads); one block per (batch·head, tile).
#define ATTN_ENTRIES(D, TILE)                                                                                         \
    extern "C" __global__ void __launch_bounds__(4 * TILE)                                                           \
        attn_fwd_##D(const float* q, const float* k, const float* v, float* out, float* lse, const i64* klen,        \
                     const float* mask, i64 causal, i64 heads, i64 tq, i64 tk, i64 d, i64 dv, double scale) {       \
        attn_fwd<D, TILE>(q, k, v, out, lse, AttnMask{klen, mask, causal, tk}, heads, tq, d, dv, (float)scale);      \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(4 * TILE)                                                           \
        attn_bwd_dkdv_##D(const float* q, const float* k, const float* v, const float* dout, const float* lse,       \
                          const float* dsum, float* dk, float* dv_, const i64* klen, const float* mask, i64 causal,   \
                          i64 heads, i64 tq, i64 tk, i64 d, i64 dv, double scale) {                                  \
        attn_bwd_dkdv<D, TILE>(q, k, v, dout, lse, dsum, dk, dv_, AttnMask{klen, mask, causal, tk}, heads, tq, d,    \
                               dv, (float)scale);                                                                    \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(4 * TILE)                                                           \
        attn_bwd_dq_##D(const float* q, const float* k, const float* v, const float* dout, const float* lse,         \
                        const float* dsum, float* dq, const i64* klen, const float* mask, i64 causal, i64 heads,      \
                        i64 tq, i64 tk, i64 d, i64 dv, double scale) {                                               \
        attn_bwd_dq<D, TILE>(q, k, v, dout, lse, dsum, dq, AttnMask{klen, mask, causal, tk}, heads, tq, d, dv,       \
                             (float)scale);                                                                          \
    }

ATTN_ENTRIES(64, 32)
ATTN_ENTRIES(128, 16)

// attn_bwd_dot writes D[r] = Σ_c dO[r, c]·O[r, c] for the rows of
// [rows, dv], one warp per row.
extern "C" __global__ void attn_bwd_dot(const float* dout, const float* out, float* dsum, i64 rows, i64 dv) {
    i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5, nw = ((i64)gridDim.x * blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    for (i64 r = w; r < rows; r += nw) {
        float s = 0.f;
        for (i64 c = lane; c < dv; c += 32) s = fmaf(dout[r * dv + c], out[r * dv + c], s);
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
        if (lane == 0) dsum[r] = s;
    }
}
