// The reductions of ops/reduce.go (TF's reduce_sum, reduce_mean,
// reduce_max, reduce_min, reduce_variance, reduce_logsumexp) over any set
// of axes, forward and backward. The host merges adjacent axes that are
// both reduced or both kept and drops axes of size 1, and passes the
// result as a geometry (RGeo): the kept dims with their strides in x, in
// the output's order, and the reduced dims with theirs. Output o reads the
// elements koff(o) + roff(r), r < n. Sums run in double, as ops'.
//
// Three forward paths share the per-output code (red_pass), each chosen so
// that neighbouring threads read neighbouring elements:
//   - reduce_rows, a block per output, when the innermost merged dim is
//     reduced and long;
//   - reduce_cols, a thread per output, when it is reduced and short;
//   - reduce_part then reduce_fin when it is kept: a block of 32 adjacent
//     outputs by RED_LANES lanes folds one chunk of the reduced elements
//     into partials, which reduce_fin combines (variance and logsumexp run
//     the pair twice, the second time around the mean or shift).
// The op codes must match reduceCodes in ops/cuda/reduce.go.
#include "common.cuh"

enum RedOp { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_VARIANCE, RED_LOGSUMEXP, RED_TIES };

#define RED_MAXDIMS 16
#define RED_TILE 32
#define RED_LANES 8

// RGeo is the merged geometry of a reduction; geo buffers hold it as i64:
// nk, nr, kd[nk], ks[nk], rd[nr], rs[nr].
struct RGeo {
    int nk, nr;
    i64 kd[RED_MAXDIMS], ks[RED_MAXDIMS], rd[RED_MAXDIMS], rs[RED_MAXDIMS];
};

// load_geo copies the geometry into shared memory; all threads call it.
__device__ void load_geo(RGeo* g, const i64* geo) {
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        g->nk = (int)geo[0];
        g->nr = (int)geo[1];
        const i64* p = geo + 2;
        for (int a = 0; a < g->nk; a++) g->kd[a] = *p++;
        for (int a = 0; a < g->nk; a++) g->ks[a] = *p++;
        for (int a = 0; a < g->nr; a++) g->rd[a] = *p++;
        for (int a = 0; a < g->nr; a++) g->rs[a] = *p++;
    }
    __syncthreads();
}

// unravel returns the offset of flat index i over the n dims d with
// strides s (0 for n == 0, where i is 0).
__device__ __forceinline__ i64 unravel(i64 i, int n, const i64* d, const i64* s) {
    if (n == 1) return i * s[0];
    i64 off = 0;
    for (int a = n - 1; a >= 0; a--) {
        off += (i % d[a]) * s[a];
        i /= d[a];
    }
    return off;
}

// Accumulators of one output's partial reduction over a subset of its
// elements: a sum (double) or an extreme (float).
struct RedAcc {
    double s;
    float m;
};

// red_pass folds the elements r = start, start+step, ... < n of output
// base into a partial: for pass 0 the sum, mean or extreme (or the max of
// logsumexp, the mean of variance); for pass 1 the sum of squared
// deviations from c (variance) or of exp(x - c) (logsumexp); for RED_TIES
// the count of elements equal to c.
__device__ RedAcc red_pass(i64 op, int pass, const float* x, const RGeo& g, i64 base, i64 n, i64 start, i64 step,
                           double c) {
    RedAcc a = {0.0, op == RED_MIN ? INFINITY : -INFINITY};
    for (i64 r = start; r < n; r += step) {
        float v = x[base + unravel(r, g.nr, g.rd, g.rs)];
        if (op == RED_TIES) {
            a.s += (v == (float)c) ? 1.0 : 0.0;
        } else if (pass == 1) {
            double e = (double)v - c;
            a.s += op == RED_VARIANCE ? e * e : exp(e);
        } else if (op == RED_MAX || op == RED_LOGSUMEXP) {
            a.m = gmax(a.m, v);
        } else if (op == RED_MIN) {
            a.m = gmin(a.m, v);
        } else {
            a.s += v;
        }
    }
    return a;
}

// red_extreme reports whether pass 0 of op takes an extreme, not a sum.
__device__ __forceinline__ bool red_extreme(i64 op) { return op == RED_MAX || op == RED_MIN || op == RED_LOGSUMEXP; }

// red_shift is logsumexp's shift: the maximum, or 0 where it is infinite
// or NaN (as ops and TF).
__device__ __forceinline__ double red_shift(float m) { return isfinite(m) ? (double)m : 0.0; }

struct RedMinOp {
    __device__ float operator()(float a, float b) const { return gmin(a, b); }
};

// reduce_rows: one block per output o < nout. y[o] gets the reduction;
// aux[o] (variance) the mean, or (RED_TIES, with y the forward output)
// the count of elements equal to y[o], which is then not written.
extern "C" __global__ void reduce_rows(i64 op, const float* x, float* y, double* aux, const i64* geo, i64 nout,
                                       i64 n) {
    __shared__ RGeo g;
    load_geo(&g, geo);
    for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
        i64 base = unravel(o, g.nk, g.kd, g.ks);
        double c = op == RED_TIES ? (double)y[o] : 0.0;
        RedAcc a = red_pass(op, 0, x, g, base, n, threadIdx.x, blockDim.x, c);
        double res;
        if (op == RED_TIES) {
            double t = block_reduce(a.s, SumOp(), 0.0);
            if (threadIdx.x == 0) aux[o] = t;
            continue;
        }
        if (op == RED_MIN) {
            res = block_reduce(a.m, RedMinOp(), INFINITY);
        } else if (red_extreme(op)) {
            res = block_reduce(a.m, MaxOp(), -INFINITY);
        } else {
            res = block_reduce(a.s, SumOp(), 0.0);
            if (op != RED_SUM) res /= (double)n;
        }
        if (op == RED_VARIANCE || op == RED_LOGSUMEXP) {
            c = op == RED_VARIANCE ? res : red_shift((float)res);
            double s = block_reduce(red_pass(op, 1, x, g, base, n, threadIdx.x, blockDim.x, c).s, SumOp(), 0.0);
            if (op == RED_VARIANCE) {
                if (threadIdx.x == 0) aux[o] = res;
                res = s / (double)n;
            } else {
                res = c + log(s);
            }
        }
        if (threadIdx.x == 0) y[o] = (float)res;
    }
}

// reduce_cols: reduce_rows with one thread per output.
extern "C" __global__ void reduce_cols(i64 op, const float* x, float* y, double* aux, const i64* geo, i64 nout,
                                       i64 n) {
    __shared__ RGeo g;
    load_geo(&g, geo);
    FOR_EACH(o, nout) {
        i64 base = unravel(o, g.nk, g.kd, g.ks);
        if (op == RED_TIES) {
            aux[o] = red_pass(op, 0, x, g, base, n, 0, 1, (double)y[o]).s;
            continue;
        }
        RedAcc a = red_pass(op, 0, x, g, base, n, 0, 1, 0.0);
        double res = red_extreme(op) ? (double)a.m : (op == RED_SUM ? a.s : a.s / (double)n);
        if (op == RED_VARIANCE) {
            aux[o] = res;
            res = red_pass(op, 1, x, g, base, n, 0, 1, res).s / (double)n;
        } else if (op == RED_LOGSUMEXP) {
            double c = red_shift(a.m);
            res = c + log(red_pass(op, 1, x, g, base, n, 0, 1, c).s);
        }
        y[o] = (float)res;
    }
}

// red_identity is what pass of op starts its partial from.
__device__ __forceinline__ double red_identity(i64 op, i64 pass) {
    if (pass == 0 && op == RED_MIN) return INFINITY;
    if (pass == 0 && red_extreme(op)) return -INFINITY;
    return 0.0;
}

// red_combine folds two partials of pass of op: the extreme (NaN-
// propagating, as gmax and gmin) or the sum.
__device__ __forceinline__ double red_combine(i64 op, i64 pass, double a, double b) {
    if (pass == 0 && red_extreme(op)) {
        if (isnan(a) || isnan(b)) return nan("");
        return op == RED_MIN ? fmin(a, b) : fmax(a, b);
    }
    return a + b;
}

// reduce_part: block (RED_TILE, RED_LANES), grid (output tiles, chunks).
// Thread (tx, ty) of block (bx, by) folds the elements ty, ty+RED_LANES,
// ... of rows [by·chunk, (by+1)·chunk) of output bx·RED_TILE + tx; the
// lanes are combined and part[by·nout + o] gets the chunk's partial of
// pass: for pass 1, around cin[o] (the mean or shift), and for RED_TIES
// the count of elements equal to y[o].
extern "C" __global__ void reduce_part(i64 op, i64 pass, const float* x, const float* y, const double* cin,
                                       const i64* geo, i64 nout, i64 n, i64 chunk, double* part) {
    __shared__ RGeo g;
    __shared__ double acc[RED_LANES][RED_TILE + 1];
    load_geo(&g, geo);
    i64 o = (i64)blockIdx.x * RED_TILE + threadIdx.x;
    i64 lo = (i64)blockIdx.y * chunk, hi = min(n, lo + chunk);
    double v = red_identity(op, pass);
    if (o < nout) {
        double c = op == RED_TIES ? (double)y[o] : (pass == 1 ? cin[o] : 0.0);
        RedAcc a = red_pass(op, (int)pass, x, g, unravel(o, g.nk, g.kd, g.ks), hi, lo + threadIdx.y, RED_LANES, c);
        v = (pass == 0 && red_extreme(op)) ? (double)a.m : a.s;
    }
    acc[threadIdx.y][threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.y == 0 && o < nout) {
        for (int k = 1; k < RED_LANES; k++) v = red_combine(op, pass, v, acc[k][threadIdx.x]);
        part[blockIdx.y * nout + o] = v;
    }
}

// reduce_fin combines the chunks' partials of reduce_part for each
// output. Pass 0 writes the sum, mean, max or min to y, the count of ties
// to aux, or for variance and logsumexp the mean or the shift to c (for
// variance c is the aux that keeps the means for the backward pass); pass
// 1 writes variance's Σ(x - mean)²/n or logsumexp's shift + log Σ exp(x -
// shift) to y.
extern "C" __global__ void reduce_fin(i64 op, i64 pass, const double* part, i64 chunks, i64 nout, i64 n, float* y,
                                      double* aux, double* c) {
    FOR_EACH(o, nout) {
        double v = part[o];
        for (i64 k = 1; k < chunks; k++) v = red_combine(op, pass, v, part[k * nout + o]);
        if (op == RED_TIES) {
            aux[o] = v;
        } else if (pass == 1) {
            y[o] = (float)(op == RED_VARIANCE ? v / (double)n : c[o] + log(v));
        } else if (op == RED_VARIANCE) {
            c[o] = v / (double)n;
        } else if (op == RED_LOGSUMEXP) {
            c[o] = red_shift((float)v);
        } else {
            y[o] = (float)(op == RED_MEAN ? v / (double)n : v);
        }
    }
}

// reduce_bwd writes dx[i] for every element i < total of x from the
// upstream gradient dy of output o(i): sum dy; mean dy/n; max and min
// dy/ties where x equals the output and 0 elsewhere; variance
// dy·2(x - mean)/n; logsumexp dy·exp(x - y). bgeo holds the merged dims of
// x and each one's stride in the output (0 for reduced dims): nd, d[nd],
// os[nd].
extern "C" __global__ void reduce_bwd(i64 op, const float* x, const float* y, const float* dy, const double* aux,
                                      const i64* bgeo, float* dx, i64 total, i64 n) {
    __shared__ i64 gd[2 * RED_MAXDIMS];
    __shared__ int nd;
    if (threadIdx.x == 0) {
        nd = (int)bgeo[0];
        for (int a = 0; a < 2 * nd; a++) gd[a] = bgeo[1 + a];
    }
    __syncthreads();
    FOR_EACH(i, total) {
        i64 o = unravel(i, nd, gd, gd + nd);
        double g = dy[o];
        switch (op) {
        case RED_SUM: dx[i] = dy[o]; break;
        case RED_MEAN: dx[i] = (float)(g / (double)n); break;
        case RED_MAX:
        case RED_MIN: dx[i] = x[i] == y[o] ? (float)(g / aux[o]) : 0.f; break;
        case RED_VARIANCE: dx[i] = (float)(g * 2 * ((double)x[i] - aux[o]) / (double)n); break;
        case RED_LOGSUMEXP: dx[i] = (float)(g * exp((double)x[i] - (double)y[o])); break;
        }
    }
}
