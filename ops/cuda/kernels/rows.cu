// Row gathers and scatters over [rows, inner] matrices, the data movement of
// the embedding lookup (ops/embedding.go) and of the sequence ops whose
// output rows are copies of input rows (ops/sequence_expand.go,
// sequence_reverse.go, sequence_slice.go, sequence_concat.go). The host
// plans which row goes where; the kernels only move and add rows. Sums
// that several rows feed run in a fixed order from a plan in CSR form, so
// they need no atomics and match ops' scatter-add bit for bit.
#include "common.cuh"

// rows_gather writes out[r, c] = x[src[r], c] for r < rows, or 0 where
// src[r] < 0 (an embedding's padding id). One thread per output element,
// so a warp reads adjacent columns of one row.
extern "C" __global__ void rows_gather(const float* x, const i64* src, float* out, i64 rows, i64 inner) {
    FOR_EACH(t, rows * inner) {
        i64 s = src[t / inner];
        out[t] = s < 0 ? 0.f : x[s * inner + t % inner];
    }
}

// rows_scatter writes out[dst[r], c] = x[r, c] for r < rows; the dst rows
// are distinct, so no two threads write one element.
extern "C" __global__ void rows_scatter(const float* x, const i64* dst, float* out, i64 rows, i64 inner) {
    FOR_EACH(t, rows * inner) out[dst[t / inner] * inner + t % inner] = x[t];
}

// rows_segsum writes, for each segment k < segs, the sum of the rows
// list[seg[k]] .. list[seg[k+1]-1] of x into row dstrow[k] of out (row k
// when dstrow is null); an empty segment writes zeros. The sum runs in list
// order in float32, as ops adds rows one after another. One thread per
// (segment, column).
extern "C" __global__ void rows_segsum(const float* x, const i64* seg, const i64* list, const i64* dstrow, float* out,
                                       i64 segs, i64 inner) {
    FOR_EACH(t, segs * inner) {
        i64 k = t / inner, c = t % inner;
        float s = 0.f;
        for (i64 j = seg[k]; j < seg[k + 1]; j++) s += x[list[j] * inner + c];
        out[(dstrow ? dstrow[k] : k) * inner + c] = s;
    }
}
