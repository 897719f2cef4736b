// Host emulation of the CUDA subset the kernels use, on fibers: every
// CUDA thread of a block is a ucontext fiber of one OS thread, run round
// robin; __syncthreads, __syncwarp and the warp shuffles are barriers at
// which a fiber yields until its block (or warp) has arrived. Blocks run
// one after another, so __shared__ is static.
#pragma once
#include <math.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <functional>
#include <algorithm>
#include <ucontext.h>
using std::min; using std::max; using std::isnan;
struct dim3e { unsigned x = 1, y = 1, z = 1; };
inline dim3e threadIdx, blockIdx, blockDim, gridDim;
inline int linearTid;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(x)
#define __restrict__
namespace emu {
struct Fiber { ucontext_t ctx; std::vector<char> stack; bool done; };
inline std::vector<Fiber> fibers;
inline ucontext_t sched;
inline int cur, nt;
inline const std::function<void()>* body;
inline long blockGen, blockArrived;
inline long warpGen[32], warpArrived[32];
inline double slots[1024];
inline void yield() { swapcontext(&fibers[cur].ctx, &sched); }
inline void entry() { (*body)(); fibers[cur].done = true; swapcontext(&fibers[cur].ctx, &sched); }
inline void barrier(long& gen, long& arrived, int parties) {
    long g = gen;
    if (++arrived == parties) { arrived = 0; gen++; return; }
    while (gen == g) yield();
}
inline int warpParties(int w) { return std::min(32, nt - 32 * w); }
}  // namespace emu
inline void __syncthreads() { emu::barrier(emu::blockGen, emu::blockArrived, emu::nt); }
inline void __syncwarp(unsigned = 0xffffffffu) { int w = linearTid >> 5; emu::barrier(emu::warpGen[w], emu::warpArrived[w], emu::warpParties(w)); }
template <class T> T shfl_impl(T v, int src) {
    int lane = linearTid & 31, w = linearTid >> 5;
    emu::slots[w * 32 + lane] = (double)v;
    __syncwarp();
    T r = (T)emu::slots[w * 32 + (src & 31)];
    __syncwarp();
    return r;
}
#define __shfl_sync(m, v, s, ...) shfl_impl((v), (s))
#define __shfl_xor_sync(m, v, o, ...) shfl_impl((v), (int)((linearTid & 31) ^ (o)))
#define __shfl_down_sync(m, v, o, ...) shfl_impl((v), (int)((linearTid & 31) + (o) < 32 ? (linearTid & 31) + (o) : (linearTid & 31)))
template <class T> T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <class T> T __ldg(const T* p) { return *p; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float rsqrtf(float x) { return 1.f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
template <class F> void launch(dim3e grid, dim3e block, F f) {
    using namespace emu;
    gridDim = grid;
    blockDim = block;
    nt = block.x * block.y * block.z;
    if (nt > 1024) { fprintf(stderr, "emu: block of %d threads\n", nt); abort(); }
    std::function<void()> fn = f;
    body = &fn;
    if ((int)fibers.size() < nt) fibers.resize(nt);
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = {bx, by, bz};
                blockGen = blockArrived = 0;
                for (int w = 0; w < 32; w++) warpGen[w] = warpArrived[w] = 0;
                for (int t = 0; t < nt; t++) {
                    Fiber& fb = fibers[t];
                    if (fb.stack.empty()) fb.stack.resize(256 * 1024);
                    fb.done = false;
                    getcontext(&fb.ctx);
                    fb.ctx.uc_stack.ss_sp = fb.stack.data();
                    fb.ctx.uc_stack.ss_size = fb.stack.size();
                    fb.ctx.uc_link = nullptr;
                    makecontext(&fb.ctx, entry, 0);
                }
                for (int left = nt; left > 0;) {
                    left = 0;
                    for (int t = 0; t < nt; t++) {
                        if (fibers[t].done) continue;
                        cur = t;
                        linearTid = t;
                        threadIdx = {(unsigned)(t % block.x), (unsigned)((t / block.x) % block.y), (unsigned)(t / (block.x * block.y))};
                        swapcontext(&sched, &fibers[t].ctx);
                        if (!fibers[t].done) left++;
                    }
                }
            }
}
