// Optimizer updates (optim/): each rule's step in place on a parameter v
// with gradient g and its slots, elementwise, in float32 with the
// operations in the order the CPU kernels of package optim apply them.
// The _rn intrinsics keep nvcc from contracting a product and a sum into
// one FMA, so each step rounds as Go's float32 arithmetic does. Every rule
// first adds the L2 term, g += l2·v (when l2 != 0), and, for Adam, scales
// v by 1 + wd where wd = -lr·weight_decay (AdamW's decoupled decay, when
// wd != 0), as optim's Step does before the rule's update. With global-norm
// clipping, the L2 term is added to the gradients in place first
// (optim_l2), their squares summed (sum_squares) and the gradients scaled
// (clip_scale) before the updates, which then take l2 = 0.
#include "common.cuh"

#define ADD(a, b) __fadd_rn((a), (b))
#define SUB(a, b) __fsub_rn((a), (b))
#define MUL(a, b) __fmul_rn((a), (b))
#define DIV(a, b) __fdiv_rn((a), (b))

// grad returns element i's gradient with the L2 term.
__device__ __forceinline__ float grad(const float* v, const float* g, i64 i, float l2) {
    return l2 != 0.f ? ADD(g[i], MUL(l2, v[i])) : g[i];
}

// optim_sgd: v -= lr·g (TF's ApplyGradientDescent).
extern "C" __global__ void optim_sgd(float* v, const float* g, i64 n, double lr, double l2) {
    float nlr = (float)(-lr), fl2 = (float)l2;
    FOR_EACH(i, n) v[i] = ADD(v[i], MUL(nlr, grad(v, g, i, fl2)));
}

// optim_momentum: acc = m·acc + g; v -= lr·acc, or with nesterov
// v -= g·lr + acc·m·lr (TF's ApplyMomentum).
extern "C" __global__ void optim_momentum(float* v, const float* g, float* acc, i64 n, double lr, double l2,
                                          double momentum, i64 nesterov) {
    float flr = (float)lr, m = (float)momentum, fl2 = (float)l2;
    FOR_EACH(i, n) {
        float gi = grad(v, g, i, fl2);
        float a = ADD(MUL(m, acc[i]), gi);
        acc[i] = a;
        v[i] = SUB(v[i], nesterov ? ADD(MUL(gi, flr), MUL(MUL(a, m), flr)) : MUL(flr, a));
    }
}

// optim_adam: m = b1·m + (1-b1)·g; s = b2·s + (1-b2)·g²;
// v -= lr_t·m/(sqrt(s) + eps) with lr_t = lr·sqrt(1-b2^t)/(1-b1^t) given
// (TF's ApplyAdam); wd != 0 first sets v += wd·v (AdamW).
extern "C" __global__ void optim_adam(float* v, const float* g, float* m, float* s, i64 n, double lr_t, double l2,
                                      double wd, double beta1, double beta2, double eps) {
    float lt = (float)lr_t, fl2 = (float)l2, fwd = (float)wd, b1 = (float)beta1, b2 = (float)beta2, e = (float)eps;
    FOR_EACH(i, n) {
        float gi = grad(v, g, i, fl2);
        float vi = v[i];
        if (fwd != 0.f) vi = ADD(vi, MUL(fwd, vi));
        float mi = ADD(MUL(b1, m[i]), MUL(SUB(1.f, b1), gi));
        float si = ADD(MUL(b2, s[i]), MUL(MUL(SUB(1.f, b2), gi), gi));
        m[i] = mi;
        s[i] = si;
        v[i] = SUB(vi, DIV(MUL(lt, mi), ADD(__fsqrt_rn(si), e)));
    }
}

// optim_rmsprop: ms = rho·ms + (1-rho)·g²; d = ms + eps, or centered
// (mg non-null) mg = rho·mg + (1-rho)·g, d = ms - mg² + eps;
// inc = lr·g/sqrt(d); with mom non-null mom = momentum·mom + inc, inc = mom;
// v -= inc (TF's ApplyRMSProp and ApplyCenteredRMSProp).
extern "C" __global__ void optim_rmsprop(float* v, const float* g, float* ms, float* mom, float* mg, i64 n,
                                         double lr, double l2, double rho, double momentum, double eps) {
    float flr = (float)lr, fl2 = (float)l2, r = (float)rho, fm = (float)momentum, e = (float)eps;
    FOR_EACH(i, n) {
        float gi = grad(v, g, i, fl2);
        float msi = ADD(MUL(r, ms[i]), MUL(MUL(SUB(1.f, r), gi), gi));
        ms[i] = msi;
        float d = ADD(msi, e);
        if (mg) {
            float mgi = ADD(MUL(r, mg[i]), MUL(SUB(1.f, r), gi));
            mg[i] = mgi;
            d = ADD(SUB(msi, MUL(mgi, mgi)), e);
        }
        float inc = DIV(MUL(flr, gi), __fsqrt_rn(d));
        if (mom) {
            inc = ADD(MUL(fm, mom[i]), inc);
            mom[i] = inc;
        }
        v[i] = SUB(v[i], inc);
    }
}

// optim_adagrad: acc += g²; v -= lr·g/sqrt(acc + eps) (Keras 3's Adagrad).
extern "C" __global__ void optim_adagrad(float* v, const float* g, float* acc, i64 n, double lr, double l2,
                                         double eps) {
    float flr = (float)lr, fl2 = (float)l2, e = (float)eps;
    FOR_EACH(i, n) {
        float gi = grad(v, g, i, fl2);
        float a = ADD(acc[i], MUL(gi, gi));
        acc[i] = a;
        v[i] = SUB(v[i], DIV(MUL(flr, gi), __fsqrt_rn(ADD(a, e))));
    }
}

// optim_l2: g += l2·v in place.
extern "C" __global__ void optim_l2(float* g, const float* v, i64 n, double l2) {
    float fl2 = (float)l2;
    FOR_EACH(i, n) g[i] = ADD(g[i], MUL(fl2, v[i]));
}

// sum_squares adds Σ g² (in double) to acc[0]: each block reduces its part
// and adds it atomically.
extern "C" __global__ void sum_squares(const float* g, i64 n, double* acc) {
    double s = 0;
    FOR_EACH(i, n) s += (double)g[i] * (double)g[i];
    s = block_reduce(s, SumOp(), 0.0);
    if (threadIdx.x == 0) atomicAdd(acc, s);
}

// clip_scale applies tf.clip_by_global_norm with norm = sqrt(acc[0]): g is
// multiplied by max_norm/norm (rounded to float) when norm > max_norm, and
// becomes NaN when the norm is NaN or infinite.
extern "C" __global__ void clip_scale(float* g, i64 n, const double* acc, double max_norm) {
    double norm = sqrt(acc[0]);
    bool bad = isnan(norm) || isinf(norm);
    if (!bad && !(norm > max_norm)) return;
    float k = (float)(max_norm / norm);
    FOR_EACH(i, n) g[i] = bad ? nanf("") : MUL(g[i], k);
}
