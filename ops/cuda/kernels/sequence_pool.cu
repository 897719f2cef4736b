// The six sequence poolings of ops/sequence_pool.go over a ragged batch:
// values x [total, inner] with offsets [B+1], sequence b being rows
// offsets[b] to offsets[b+1]. One thread per (sequence, column), so
// threads of a warp read adjacent columns of one row. The pool codes must
// match poolCodes in ops/cuda/sequence_pool.go.
#include "common.cuh"

enum SeqPool { SP_SUM, SP_AVERAGE, SP_SQRT, SP_MAX, SP_FIRST, SP_LAST };

// seq_scale is the factor by which sum, average and sqrt scale a sum of
// len steps.
__device__ __forceinline__ double seq_scale(i64 kind, i64 len) {
    if (kind == SP_AVERAGE) return 1.0 / (double)len;
    if (kind == SP_SQRT) return 1.0 / sqrt((double)len);
    return 1.0;
}

// seqpool_fwd pools x into y [B, inner]; an empty sequence gets pad. For
// max it writes the row of each output's first maximum into arg.
extern "C" __global__ void seqpool_fwd(i64 kind, const float* x, const i64* off, float* y, i64* arg, i64 batch,
                                       i64 inner, double pad) {
    FOR_EACH(t, batch * inner) {
        i64 b = t / inner, c = t % inner, s = off[b], e = off[b + 1];
        if (s == e) {
            y[t] = (float)pad;
            continue;
        }
        switch (kind) {
        case SP_FIRST: y[t] = x[s * inner + c]; break;
        case SP_LAST: y[t] = x[(e - 1) * inner + c]; break;
        case SP_MAX: {
            i64 best = s;
            for (i64 r = s + 1; r < e; r++)
                if (x[r * inner + c] > x[best * inner + c]) best = r;
            arg[t] = best;
            y[t] = x[best * inner + c];
            break;
        }
        default: {
            double acc = 0;
            for (i64 r = s; r < e; r++) acc += x[r * inner + c];
            y[t] = (float)(acc * seq_scale(kind, e - s));
        }
        }
    }
}

// seqpool_bwd writes the gradient dx [total, inner], zeroed by the caller,
// for the upstream gradient dy [B, inner]; empty sequences reach no rows.
extern "C" __global__ void seqpool_bwd(i64 kind, const float* dy, const i64* off, const i64* arg, float* dx,
                                       i64 batch, i64 inner) {
    FOR_EACH(t, batch * inner) {
        i64 b = t / inner, c = t % inner, s = off[b], e = off[b + 1];
        if (s == e) continue;
        float d = dy[t];
        switch (kind) {
        case SP_FIRST: dx[s * inner + c] = d; break;
        case SP_LAST: dx[(e - 1) * inner + c] = d; break;
        case SP_MAX: dx[arg[t] * inner + c] = d; break;
        default: {
            float v = (float)(d * seq_scale(kind, e - s));
            for (i64 r = s; r < e; r++) dx[r * inner + c] = v;
        }
        }
    }
}
