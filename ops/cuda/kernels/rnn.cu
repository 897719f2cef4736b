// Fused gate kernels of the LSTM and GRU sequences of ops/lstm.go and
// ops/gru.go over a ragged batch. The Go side (ops/cuda/rnn.go) sorts the
// sequences by length, longest first, so that at time step t the active
// sequences are the first n = active[t] rows of a packed [B, ·] state; it
// runs one GEMM for every step's input projection, then per step a GEMM on
// the active rows of the state and one of these kernels, which also
// scatters the step's results to the value rows of the batch. Every kernel
// has one thread per (active sequence j, hidden unit k), so a warp touches
// consecutive units of one row.
//
// The row arrays: rows[j] is the value row of the j-th longest sequence at
// this step; prev[r] is the row processed just before row r, or -(q+1) at
// the first step of sequence q, whose entering state is row q of the
// initial state (zeros without one).
#include "common.cuh"

__device__ __forceinline__ float sigm(float x) { return 1.f / (1.f + expf(-x)); }

// lstm_act is an LSTM's candidate or cell-output activation a(x), coded
// as ops.RNNActivation: 0 tanh, 1 sigmoid, 2 relu, 3 identity (Paddle's
// candidate_activation and cell_activation). lstm_act_grad is a'(x) from
// y = a(x), as ops' RNNActivation.grad.
__device__ __forceinline__ float lstm_act(i64 a, float x) {
    switch (a) {
    case 1: return sigm(x);
    case 2: return fmaxf(x, 0.f);
    case 3: return x;
    }
    return tanhf(x);
}

__device__ __forceinline__ float lstm_act_grad(i64 a, float y) {
    switch (a) {
    case 1: return y * (1.f - y);
    case 2: return y > 0.f ? 1.f : 0.f;
    case 3: return 1.f;
    }
    return 1.f - y * y;
}

// rnn_gather_rows copies rows idx[j] of src [·, w] to rows j of dst, for
// j < n; rnn_scatter_rows copies rows j of src to rows idx[j] of dst.
extern "C" __global__ void rnn_gather_rows(const float* src, const i64* idx, float* dst, i64 n, i64 w) {
    FOR_EACH(t, n * w) {
        i64 j = t / w, k = t % w;
        dst[t] = src[idx[j] * w + k];
    }
}
extern "C" __global__ void rnn_scatter_rows(const float* src, const i64* idx, float* dst, i64 n, i64 w) {
    FOR_EACH(t, n * w) {
        i64 j = t / w, k = t % w;
        dst[idx[j] * w + k] = src[t];
    }
}

// rnn_prev_states writes hp [total, h], whose row r is the state that
// entered the step of row r: columns [0, h) of row prev[r] of states (row
// stride ld), or the sequence's row of init (zeros when init is null).
extern "C" __global__ void rnn_prev_states(const float* states, i64 ld, const float* init, const i64* prev, float* hp,
                                           i64 total, i64 h) {
    FOR_EACH(t, total * h) {
        i64 r = t / h, k = t % h, p = prev[r];
        float v = 0.f;
        if (p >= 0)
            v = states[p * ld + k];
        else if (init)
            v = init[(-p - 1) * h + k];
        hp[t] = v;
    }
}

// lstm_fwd_step is one LSTM step (gate blocks i, f, g, o; Keras, cuDNN;
// peepholes as TF's LSTMCell(use_peepholes=True)):
//
//	i = σ(xWi + hUi + bi + pi∘c)   f = σ(xWf + hUf + bf + pf∘c)
//	g = tanh(xWg + hUg + bg)       c' = f∘c + i∘g
//	o = σ(xWo + hUo + bo + po∘c')  h' = o∘tanh(c')
//
// with the candidate's activation cand in place of g's tanh and the cell
// output's, cell, in place of h's (lstm_act).
//
// act [total, 4H] holds x·W at the step's rows on entry and the gate
// activations i, f, g, o on return; z [n, 4H] is h·U of the active rows;
// hs, cs [B, H] are the packed state, updated in place; out [total, 2H]
// gets (h', c') at each row. p (peepholes [3H]) may be null.
extern "C" __global__ void lstm_fwd_step(float* act, const float* z, const float* b, const float* p, float* hs,
                                         float* cs, float* out, const i64* rows, i64 n, i64 h, i64 cand, i64 cell) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        float* a = act + r * 4 * h;
        const float* zj = z + j * 4 * h;
        float c = cs[t];
        float zi = a[k] + zj[k] + b[k], zf = a[h + k] + zj[h + k] + b[h + k];
        float zg = a[2 * h + k] + zj[2 * h + k] + b[2 * h + k], zo = a[3 * h + k] + zj[3 * h + k] + b[3 * h + k];
        if (p) {
            zi += p[k] * c;
            zf += p[h + k] * c;
        }
        float i = sigm(zi), f = sigm(zf), g = lstm_act(cand, zg);
        float cn = f * c + i * g;
        if (p) zo += p[2 * h + k] * cn;
        float o = sigm(zo), hn = o * lstm_act(cell, cn);
        a[k] = i;
        a[h + k] = f;
        a[2 * h + k] = g;
        a[3 * h + k] = o;
        cs[t] = cn;
        hs[t] = hn;
        out[r * 2 * h + k] = hn;
        out[r * 2 * h + h + k] = cn;
    }
}

// lstm_bwd_step is one step of back-propagation through time. With δh, δc
// the packed gradients [B, H] reaching h', c' from the next step (added
// here to the output's gradient gout [total, 2H]) and c the step's input
// cell state (row prev[r] of out, or of c0):
//
//	δc' = δc + δh∘o∘(1-tanh²c') + δo∘po      δo = δh∘tanh(c')∘o(1-o)
//	δi = δc'∘g∘i(1-i)   δf = δc'∘c∘f(1-f)    δg = δc'∘i∘(1-g²)
//	δc (to the previous step) = δc'∘f + δi∘pi + δf∘pf
//
// It writes the gate pre-activation gradients [δi δf δg δo] at row r of
// dz [total, 4H] and at row j of dzs [B, 4H] (the operand of the step's
// δh = dzs·Uᵀ GEMM), δc into dc, and with peepholes the per-row terms of
// their gradient (δi∘c, δf∘c, δo∘c') at row r of dpp [total, 3H], summed
// over rows afterwards; p and dpp may be null, c0 too. With activations
// cand and cell (lstm_fwd_step), tanh(c') is cell's a(c'), 1-tanh²c' its
// derivative and 1-g² cand's (lstm_act_grad).
extern "C" __global__ void lstm_bwd_step(const float* act, const float* out, const float* c0, const i64* prev,
                                         const float* gout, const float* p, const float* dh, float* dc, float* dz,
                                         float* dzs, float* dpp, const i64* rows, i64 n, i64 h, i64 cand, i64 cell) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j], pr = prev[r];
        float cp = 0.f;
        if (pr >= 0)
            cp = out[pr * 2 * h + h + k];
        else if (c0)
            cp = c0[(-pr - 1) * h + k];
        const float* a = act + r * 4 * h;
        float i = a[k], f = a[h + k], g = a[2 * h + k], o = a[3 * h + k];
        float c = out[r * 2 * h + h + k], tc = lstm_act(cell, c);
        float dhk = dh[t] + gout[r * 2 * h + k];
        float dck = dc[t] + gout[r * 2 * h + h + k];
        float d_o = dhk * tc * o * (1.f - o);
        dck += dhk * o * lstm_act_grad(cell, tc);
        if (p) dck += d_o * p[2 * h + k];
        float di = dck * g * i * (1.f - i), df = dck * cp * f * (1.f - f), dg = dck * i * lstm_act_grad(cand, g);
        float dcp = dck * f;
        if (p) dcp += di * p[k] + df * p[h + k];
        if (dpp) {
            float* q = dpp + r * 3 * h;
            q[k] = di * cp;
            q[h + k] = df * cp;
            q[2 * h + k] = d_o * c;
        }
        dc[t] = dcp;
        float* zr = dz + r * 4 * h;
        float* zs = dzs + j * 4 * h;
        zr[k] = zs[k] = di;
        zr[h + k] = zs[h + k] = df;
        zr[2 * h + k] = zs[2 * h + k] = dg;
        zr[3 * h + k] = zs[3 * h + k] = d_o;
    }
}

// gru_fwd_step is one GRU step with reset_after (Keras GRUCell
// reset_after=True, cuDNN): with b the input bias row and b' the recurrent
// one ([2, 3H]),
//
//	z = σ(xWz + bz + hUz + b'z)   r = σ(xWr + br + hUr + b'r)
//	h̃ = tanh(xWh + bh + r∘(hUh + b'h))   h' = z∘h + (1-z)∘h̃
//
// act [total, 3H] holds x·W on entry and z, r, h̃ on return; rec [n, 3H]
// is h·U of the active rows; rech [total, H] gets hUh + b'h per row, for
// the backward pass; hs [B, H] is updated in place and out [total, H] gets h'.
extern "C" __global__ void gru_fwd_step(float* act, const float* rec, const float* b, float* hs, float* rech,
                                        float* out, const i64* rows, i64 n, i64 h) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        float* a = act + r * 3 * h;
        const float* rc = rec + j * 3 * h;
        const float* br = b + 3 * h;
        float z = sigm(a[k] + b[k] + (rc[k] + br[k]));
        float rg = sigm(a[h + k] + b[h + k] + (rc[h + k] + br[h + k]));
        float rh = rc[2 * h + k] + br[2 * h + k];
        float hh = tanhf(a[2 * h + k] + b[2 * h + k] + rg * rh);
        float hn = z * hs[t] + (1.f - z) * hh;
        a[k] = z;
        a[h + k] = rg;
        a[2 * h + k] = hh;
        rech[r * h + k] = rh;
        hs[t] = hn;
        out[r * h + k] = hn;
    }
}

// gru_fwd_zr and gru_fwd_h are the two halves of a GRU step without
// reset_after (Cho et al. 2014, Keras reset_after=False):
//
//	z = σ(xWz + hUz + bz)   r = σ(xWr + hUr + br)
//	h̃ = tanh(xWh + (r∘h)·Uh + bh)   h' = z∘h + (1-z)∘h̃
//
// gru_fwd_zr takes rec [n, 3H] with h·[Uz Ur] in its first 2H columns,
// writes z and r into act and r∘h into rh [n, H], the operand of the
// GEMM that fills rec's last H columns with (r∘h)·Uh for gru_fwd_h.
extern "C" __global__ void gru_fwd_zr(float* act, const float* rec, const float* b, const float* hs, float* rh,
                                      const i64* rows, i64 n, i64 h) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        float* a = act + r * 3 * h;
        const float* rc = rec + j * 3 * h;
        float z = sigm(a[k] + b[k] + rc[k]), rg = sigm(a[h + k] + b[h + k] + rc[h + k]);
        a[k] = z;
        a[h + k] = rg;
        rh[t] = rg * hs[t];
    }
}
extern "C" __global__ void gru_fwd_h(float* act, const float* rec, const float* b, float* hs, float* out,
                                     const i64* rows, i64 n, i64 h) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        float* a = act + r * 3 * h;
        float hh = tanhf(a[2 * h + k] + b[2 * h + k] + rec[j * 3 * h + 2 * h + k]);
        float z = a[k], hn = z * hs[t] + (1.f - z) * hh;
        a[2 * h + k] = hh;
        hs[t] = hn;
        out[r * h + k] = hn;
    }
}

// gru_bwd_step starts one step of the GRU's back-propagation. With δh the
// packed gradient [B, H] from the next step plus gout at the row, and hp
// the state entering the step ([total, H]):
//
//	δz = δh∘(hp - h̃)∘z(1-z)   δh̃ = δh∘(1-z)∘(1-h̃²)   δh ← δh∘z
//
// With reset_after (rech non-null) also δr = δh̃∘(hpUh + b'h)∘r(1-r): the
// input pre-activation gradient [δz δr δh̃] goes to row r of da, the
// recurrent one [δz δr δh̃∘r] to row r of drec and row j of step, for
// δh += step·Uᵀ. Without it, δz and δh̃ go to da and step, and
// gru_bwd_reset adds δr once δ(r∘h) = step_h̃·Uhᵀ is known.
extern "C" __global__ void gru_bwd_step(const float* act, const float* hp, const float* rech, const float* gout,
                                        float* dh, float* da, float* drec, float* step, const i64* rows, i64 n,
                                        i64 h) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        const float* a = act + r * 3 * h;
        float z = a[k], rg = a[h + k], hh = a[2 * h + k];
        float dhk = dh[t] + gout[r * h + k];
        float dz = dhk * (hp[r * h + k] - hh) * z * (1.f - z);
        float dhh = dhk * (1.f - z) * (1.f - hh * hh);
        dh[t] = dhk * z;
        float* dar = da + r * 3 * h;
        float* st = step + j * 3 * h;
        dar[k] = st[k] = dz;
        dar[2 * h + k] = dhh;
        if (rech) {
            float dr = dhh * rech[r * h + k] * rg * (1.f - rg);
            dar[h + k] = st[h + k] = dr;
            st[2 * h + k] = dhh * rg;
            float* dq = drec + r * 3 * h;
            dq[k] = dz;
            dq[h + k] = dr;
            dq[2 * h + k] = dhh * rg;
        } else {
            st[2 * h + k] = dhh;
        }
    }
}

// gru_bwd_reset finishes a step without reset_after: from drh = δ(r∘hp)
// [n, H] it writes δr = drh∘hp∘r(1-r) into da and step and adds drh∘r to
// δh; the GEMM δh += step·[Uz Ur]ᵀ follows.
extern "C" __global__ void gru_bwd_reset(const float* act, const float* hp, const float* drh, float* dh, float* da,
                                         float* step, const i64* rows, i64 n, i64 h) {
    FOR_EACH(t, n * h) {
        i64 j = t / h, k = t % h, r = rows[j];
        float rg = act[r * 3 * h + h + k], d = drh[t];
        float dr = d * hp[r * h + k] * rg * (1.f - rg);
        da[r * 3 * h + h + k] = dr;
        step[j * 3 * h + h + k] = dr;
        dh[t] += d * rg;
    }
}

// gru_reset_prev overwrites hp [total, H] with r∘hp, the input of Uh
// without reset_after, for Uh's gradient.
extern "C" __global__ void gru_reset_prev(const float* act, float* hp, i64 total, i64 h) {
    FOR_EACH(t, total * h) {
        i64 r = t / h, k = t % h;
        hp[t] *= act[r * 3 * h + h + k];
    }
}

// rnn_sum_parts writes C = beta·C + Σ_s parts[s] for the split-K partial
// products parts [splits, m, n] of a recurrent step's GEMM, into the m×n
// matrix C of row stride ldc (kernels/gemm.cu leaves too few blocks busy
// for a step's few rows, so the step GEMM splits K over the grid).
extern "C" __global__ void rnn_sum_parts(const float* parts, float* c, i64 splits, i64 m, i64 n, i64 ldc,
                                         double beta) {
    float be = (float)beta;
    FOR_EACH(t, m * n) {
        float s = 0.f;
        for (i64 z = 0; z < splits; z++) s += parts[z * m * n + t];
        float* o = c + (t / n) * ldc + t % n;
        *o = be != 0.f ? be * *o + s : s;
    }
}
