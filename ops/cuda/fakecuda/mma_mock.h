// A mock of the wmma API: every lane holds the whole tile, so the
// kernel's tiling and indexing are checked, not the hardware layout.
#pragma once
#include <cstring>
namespace nvcuda { namespace wmma {
struct matrix_a {}; struct matrix_b {}; struct accumulator {};
struct row_major {}; struct col_major {};
namespace precision { struct tf32 {}; }
enum layout_t { mem_row_major, mem_col_major };
template <class Use, int M, int N, int K, class T, class L = void> struct fragment;
template <int M, int N, int K, class L> struct fragment<matrix_a, M, N, K, precision::tf32, L> { float v[M][K]; };
template <int M, int N, int K, class L> struct fragment<matrix_b, M, N, K, precision::tf32, L> { float v[K][N]; };
template <int M, int N, int K> struct fragment<accumulator, M, N, K, float, void> { float v[M][N]; };
template <int M, int N, int K> inline void fill_fragment(fragment<accumulator, M, N, K, float, void>& f, float x) { for (auto& r : f.v) for (auto& e : r) e = x; }
template <int M, int N, int K> inline void load_matrix_sync(fragment<matrix_a, M, N, K, precision::tf32, row_major>& f, const float* p, unsigned ldm) { for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) f.v[i][k] = p[i * ldm + k]; }
template <int M, int N, int K> inline void load_matrix_sync(fragment<matrix_b, M, N, K, precision::tf32, row_major>& f, const float* p, unsigned ldm) { for (int k = 0; k < K; k++) for (int j = 0; j < N; j++) f.v[k][j] = p[k * ldm + j]; }
template <int M, int N, int K, class LA, class LB> inline void mma_sync(fragment<accumulator, M, N, K, float, void>& d, const fragment<matrix_a, M, N, K, precision::tf32, LA>& a, const fragment<matrix_b, M, N, K, precision::tf32, LB>& b, const fragment<accumulator, M, N, K, float, void>& c) {
    fragment<accumulator, M, N, K, float, void> r;
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float s = c.v[i][j]; for (int k = 0; k < K; k++) s += a.v[i][k] * b.v[k][j]; r.v[i][j] = s; }
    d = r;
}
template <int M, int N, int K> inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float, void>& f, unsigned ldm, layout_t) {
    // Lane 0 stores; the kernel's __syncwarp orders the other lanes' reads after it.
    if ((linearTid & 31) == 0) for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) p[i * ldm + j] = f.v[i][j];
}
inline float __float_to_tf32(float x) { unsigned u; memcpy(&u, &x, 4); u = (u + 0x1000u) & 0xffffe000u; memcpy(&x, &u, 4); return x; }
} }
