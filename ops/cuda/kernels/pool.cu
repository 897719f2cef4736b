// 2-D max and average pooling (ops/pool.go) over the N·C planes of an NCHW
// batch. Padded cells never count: a window is clipped to the image, the
// max takes the first maximum in row-major order and the average divides
// by the cells inside. The backward kernels gather, one thread per input
// cell over the windows that hold it, so overlapping windows need no
// atomics.
#include "common.cuh"

#define POOL_PARAMS i64 planes, i64 H, i64 W, i64 KH, i64 KW, i64 SH, i64 SW, i64 PT, i64 PL, i64 OH, i64 OW

// window returns output t's window clipped to its plane: rows [h0, h1),
// columns [w0, w1).
__device__ __forceinline__ void window(i64 t, i64 H, i64 W, i64 KH, i64 KW, i64 SH, i64 SW, i64 PT, i64 PL, i64 OH,
                                       i64 OW, i64* h0, i64* h1, i64* w0, i64* w1) {
    i64 h = ((t / OW) % OH) * SH - PT, w = (t % OW) * SW - PL;
    *h0 = max(h, 0LL);
    *h1 = min(h + KH, H);
    *w0 = max(w, 0LL);
    *w1 = min(w + KW, W);
}

// pool_fwd writes each window's maximum and its flat input index into y and
// arg (max != 0), or each window's mean into y.
extern "C" __global__ void pool_fwd(i64 is_max, const float* x, float* y, i64* arg, POOL_PARAMS) {
    FOR_EACH(t, planes * OH * OW) {
        i64 h0, h1, w0, w1;
        window(t, H, W, KH, KW, SH, SW, PT, PL, OH, OW, &h0, &h1, &w0, &w1);
        i64 base = (t / (OH * OW)) * H * W;
        if (is_max) {
            i64 at = base + h0 * W + w0;
            for (i64 i = h0; i < h1; i++)
                for (i64 j = base + i * W + w0; j < base + i * W + w1; j++)
                    if (x[j] > x[at]) at = j;
            y[t] = x[at];
            arg[t] = at;
        } else {
            float s = 0.f;
            for (i64 i = h0; i < h1; i++)
                for (i64 j = base + i * W + w0; j < base + i * W + w1; j++) s += x[j];
            y[t] = s / (float)((h1 - h0) * (w1 - w0));
        }
    }
}

// pool_bwd writes dx, for each input cell, the sum over the windows that
// hold it of dy (max: only where the cell is the window's arg) or dy over
// the window's cell count (average), windows taken in row-major order.
extern "C" __global__ void pool_bwd(i64 is_max, const float* dy, const i64* arg, float* dx, POOL_PARAMS) {
    FOR_EACH(t, planes * H * W) {
        i64 w = t % W, h = (t / W) % H, plane = t / (H * W);
        // Windows oh with oh·SH − PT <= h < oh·SH − PT + KH, likewise ow.
        i64 oh0 = max((h + PT - KH + SH) / SH, 0LL), oh1 = min((h + PT) / SH + 1, OH);
        i64 ow0 = max((w + PL - KW + SW) / SW, 0LL), ow1 = min((w + PL) / SW + 1, OW);
        float s = 0.f;
        for (i64 oh = oh0; oh < oh1; oh++) {
            for (i64 ow = ow0; ow < ow1; ow++) {
                i64 o = (plane * OH + oh) * OW + ow;
                if (is_max) {
                    if (arg[o] == t) s += dy[o];
                } else {
                    i64 h0, h1, w0, w1;
                    window(o, H, W, KH, KW, SH, SW, PT, PL, OH, OW, &h0, &h1, &w0, &w1);
                    s += dy[o] / (float)((h1 - h0) * (w1 - w0));
                }
            }
        }
        dx[t] = s;
    }
}
