// The lowering kernels of conv2d (ops/conv2d.go, internal/im2col): im2col
// writes the sliding windows of a batch of NCHW images as columns, col2im
// is its adjoint, and add_bias adds a per-channel bias. The GEMMs between
// them are sgemm's.
#include "common.cuh"

// Geometry of one convolution, as internal/im2col.Geom: C input channels of
// H×W, a KH×KW kernel at strides SH, SW and dilations DH, DW, padding PT
// above and PL left, giving OH×OW outputs. R = C·KH·KW rows and P = OH·OW
// columns per image.
#define GEOM_PARAMS i64 C, i64 H, i64 W, i64 KH, i64 KW, i64 SH, i64 SW, i64 DH, i64 DW, i64 PT, i64 PL, i64 OH, i64 OW

// im2col writes x [N, C, H, W] as col [N, R, P] with
// col[i, (c·KH+kh)·KW+kw, oh·OW+ow] = x[i, c, oh·SH−PT+kh·DH, ow·SW−PL+kw·DW],
// or 0 in the padding; one thread per column entry.
extern "C" __global__ void im2col(const float* x, float* col, i64 N, GEOM_PARAMS) {
    i64 P = OH * OW, R = C * KH * KW;
    FOR_EACH(t, N * R * P) {
        i64 q = t % P, r = (t / P) % R, i = t / (P * R);
        i64 c = r / (KH * KW), kh = (r / KW) % KH, kw = r % KW;
        i64 ih = (q / OW) * SH - PT + kh * DH, iw = (q % OW) * SW - PL + kw * DW;
        col[t] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[((i * C + c) * H + ih) * W + iw] : 0.f;
    }
}

// col2im writes x [N, C, H, W] = the sum of every col [N, R, P] entry read
// from each input cell: the adjoint of im2col. One thread per input cell
// gathers its entries, so the sum needs no atomics and is deterministic.
extern "C" __global__ void col2im(const float* col, float* x, i64 N, GEOM_PARAMS) {
    i64 P = OH * OW, R = C * KH * KW;
    FOR_EACH(t, N * C * H * W) {
        i64 w = t % W, h = (t / W) % H, c = (t / (W * H)) % C, i = t / (W * H * C);
        float s = 0.f;
        for (i64 kh = 0; kh < KH; kh++) {
            i64 th = h + PT - kh * DH;  // = oh·SH
            if (th < 0 || th % SH != 0 || th / SH >= OH) continue;
            for (i64 kw = 0; kw < KW; kw++) {
                i64 tw = w + PL - kw * DW;  // = ow·SW
                if (tw < 0 || tw % SW != 0 || tw / SW >= OW) continue;
                s += col[(i * R + (c * KH + kh) * KW + kw) * P + (th / SH) * OW + tw / SW];
            }
        }
        x[t] = s;
    }
}

// add_bias adds b[ch] to every element of channel ch of y [n, c, p].
extern "C" __global__ void add_bias(float* y, const float* b, i64 n, i64 c, i64 p) {
    FOR_EACH(t, n * c * p) y[t] += b[(t / p) % c];
}
