// Elementwise kernels: the unary ops and activations of ops/unary.go and
// the binary ops of ops/binary.go, forward and backward, and the column
// and channel sums that fold broadcast and bias gradients. The op codes
// must match unaryCodes and binaryCodes in ops/cuda/elementwise.go.
#include "common.cuh"

enum Unary {
    U_NEG, U_EXP, U_LOG, U_SQRT, U_RSQRT, U_SQUARE, U_ABS, U_CLIP, U_RELU, U_RELU6,
    U_LEAKY_RELU, U_ELU, U_GELU, U_GELU_TANH, U_SIGMOID, U_TANH, U_SOFTPLUS, U_SWISH
};

enum Binary { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAXIMUM, B_MINIMUM };

#define SQRT2_OVER_PI 0.7978845608028654f
#define INV_SQRT_2PI 0.3989422804014327f

// sigmoid is 1/(1+exp(-x)), written to avoid overflow for large |x|.
__device__ __forceinline__ float sigmoid(float x) {
    if (x >= 0) return 1.f / (1.f + expf(-x));
    float e = expf(x);
    return e / (1.f + e);
}

// unary_f is y = f(x) with attributes p0, p1 (alpha; clip's lo and hi).
__device__ float unary_f(i64 op, float x, float p0, float p1) {
    switch (op) {
    case U_NEG: return -x;
    case U_EXP: return expf(x);
    case U_LOG: return logf(x);
    case U_SQRT: return sqrtf(x);
    case U_RSQRT: return 1.f / sqrtf(x);  // rsqrtf is off by up to 2 ulp
    case U_SQUARE: return x * x;
    case U_ABS: return fabsf(x);
    case U_CLIP: return gmin(gmax(x, p0), p1);
    case U_RELU: return gmax(x, 0.f);
    case U_RELU6: return gmin(gmax(x, 0.f), 6.f);
    case U_LEAKY_RELU: return x > 0 ? x : p0 * x;
    case U_ELU: return x > 0 ? x : p0 * expm1f(x);
    case U_GELU: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case U_GELU_TANH: return 0.5f * x * (1.f + tanhf(SQRT2_OVER_PI * (x + 0.044715f * x * x * x)));
    case U_SIGMOID: return sigmoid(x);
    case U_TANH: return tanhf(x);
    case U_SOFTPLUS: return gmax(x, 0.f) + log1pf(expf(-fabsf(x)));
    case U_SWISH: return x * sigmoid(x);
    }
    return nanf("");
}

// unary_d is dy/dx given x and y = f(x); at kinks it is TF's choice, as in
// ops/unary.go.
__device__ float unary_d(i64 op, float x, float y, float p0, float p1) {
    switch (op) {
    case U_NEG: return -1.f;
    case U_EXP: return y;
    case U_LOG: return 1.f / x;
    case U_SQRT: return 0.5f / y;
    case U_RSQRT: return -0.5f * y / x;
    case U_SQUARE: return 2.f * x;
    case U_ABS: return x > 0 ? 1.f : (x < 0 ? -1.f : 0.f);
    case U_CLIP: return (x >= p0 && x <= p1) ? 1.f : 0.f;
    case U_RELU: return x > 0 ? 1.f : 0.f;
    case U_RELU6: return (x > 0 && x < 6) ? 1.f : 0.f;
    case U_LEAKY_RELU: return x > 0 ? 1.f : p0;
    case U_ELU: return x > 0 ? 1.f : y + p0;
    case U_GELU:
        return 0.5f * (1.f + erff(x * 0.70710678118654752f)) + x * expf(-0.5f * x * x) * INV_SQRT_2PI;
    case U_GELU_TANH: {
        float t = tanhf(SQRT2_OVER_PI * (x + 0.044715f * x * x * x));
        return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * SQRT2_OVER_PI * (1.f + 3.f * 0.044715f * x * x);
    }
    case U_SIGMOID: return y * (1.f - y);
    case U_TANH: return 1.f - y * y;
    case U_SOFTPLUS: return sigmoid(x);
    case U_SWISH: {
        float s = sigmoid(x);
        return s + x * s * (1.f - s);
    }
    }
    return nanf("");
}

extern "C" __global__ void unary_fwd(i64 op, const float* x, float* y, i64 n, double p0, double p1) {
    FOR_EACH(i, n) y[i] = unary_f(op, x[i], (float)p0, (float)p1);
}

// unary_bwd writes dx = dy * f'(x, y).
extern "C" __global__ void unary_bwd(i64 op, const float* x, const float* y, const float* dy, float* dx, i64 n,
                                     double p0, double p1) {
    FOR_EACH(i, n) dx[i] = dy[i] * unary_d(op, x[i], y[i], (float)p0, (float)p1);
}

__device__ float binary_f(i64 op, float a, float b) {
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_POW: return powf(a, b);
    case B_MAXIMUM: return gmax(a, b);
    case B_MINIMUM: return gmin(a, b);
    }
    return nanf("");
}

// binary_da and binary_db are the partials of y = f(a, b); maximum and
// minimum send the gradient to a on ties, pow's db is 0 where a <= 0 (TF).
__device__ float binary_da(i64 op, float a, float b, float y) {
    switch (op) {
    case B_ADD: case B_SUB: return 1.f;
    case B_MUL: return b;
    case B_DIV: return 1.f / b;
    case B_POW: return b * powf(a, b - 1.f);
    case B_MAXIMUM: return a >= b ? 1.f : 0.f;
    case B_MINIMUM: return a <= b ? 1.f : 0.f;
    }
    return nanf("");
}

__device__ float binary_db(i64 op, float a, float b, float y) {
    switch (op) {
    case B_ADD: return 1.f;
    case B_SUB: return -1.f;
    case B_MUL: return a;
    case B_DIV: return -y / b;
    case B_POW: return a > 0 ? y * logf(a) : 0.f;
    case B_MAXIMUM: return a < b ? 1.f : 0.f;
    case B_MINIMUM: return a > b ? 1.f : 0.f;
    }
    return nanf("");
}

// binary_fwd writes y[i] = f(a[i], b[i % nb]): b has a's shape (nb == n)
// or is a's trailing dims, repeated over its leading ones.
extern "C" __global__ void binary_fwd(i64 op, const float* a, const float* b, float* y, i64 n, i64 nb) {
    FOR_EACH(i, n) y[i] = binary_f(op, a[i], b[i % nb]);
}

// binary_bwd writes da[i] = dy[i]·∂f/∂a and db[i] = dy[i]·∂f/∂b over a's
// shape, either output null when unwanted; a broadcast b's gradient is
// then folded by channel_sum.
extern "C" __global__ void binary_bwd(i64 op, const float* a, const float* b, const float* y, const float* dy,
                                      float* da, float* db, i64 n, i64 nb) {
    FOR_EACH(i, n) {
        float av = a[i], bv = b[i % nb], yv = y[i];
        if (da) da[i] = dy[i] * binary_da(op, av, bv, yv);
        if (db) db[i] = dy[i] * binary_db(op, av, bv, yv);
    }
}

// channel_sum writes y[ch] = Σ_{i<n, q<p} x[(i·c + ch)·p + q] for each of
// the c channels, one block per channel: a bias gradient over [n, c, p],
// or with p = 1 the sum over the rows of an [n, c] matrix. It accumulates
// in double.
extern "C" __global__ void channel_sum(const float* x, float* y, i64 n, i64 c, i64 p) {
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double s = 0;
        for (i64 j = threadIdx.x; j < n * p; j += blockDim.x) {
            i64 i = j / p, q = j % p;
            s += x[(i * c + ch) * p + q];
        }
        s = block_reduce(s, SumOp(), 0.0);
        if (threadIdx.x == 0) y[ch] = (float)s;
    }
}
