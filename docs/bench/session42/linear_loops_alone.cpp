// dpbf16_linear's row_tile alone: a task's weights [pairs][T][16] pairs (L1/L2-resident), 480 rows of x,
// one thread, with and without the per-pair weight prefetch; GMAC/s for T, R. Usage: ./a.out K
// (__builtin_prefetch here: with vec.h's asm prefetch GCC kept this loop's 16 sums in memory, 3x
// slower; the kernel's own loop, checked by objdump, keeps them in registers.)
#include <immintrin.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
inline void prefetch_l2(const void* p) { __builtin_prefetch(p, 0, 2); }
struct Fetch { const char* base = nullptr; uint64_t rate = 0; int per_pair = 0; };
template <int R, int T, bool kFetch>
[[gnu::noinline]] void row_tile(const uint32_t* x, int64_t x_stride, const uint32_t* w, int64_t pairs, const Fetch& fetch, __m512* acc) {
  __m512 sum[R][T];
  for (int r = 0; r < R; ++r) for (int t = 0; t < T; ++t) sum[r][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    if (kFetch) {
      const char* line = fetch.base + ((static_cast<uint64_t>(p) * fetch.rate) >> 32) * 64;
      for (int i = 0; i < fetch.per_pair; ++i) prefetch_l2(line + 64 * i);
    }
    __m512bh wv[T];
    for (int t = 0; t < T; ++t) wv[t] = (__m512bh)_mm512_loadu_si512(w + (p * T + t) * 16);
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32((int)x[r * x_stride + p]);
      for (int t = 0; t < T; ++t) sum[r][t] = _mm512_dpbf16_ps(sum[r][t], xv, wv[t]);
    }
  }
  for (int r = 0; r < R; ++r) for (int t = 0; t < T; ++t) acc[r * T + t] = sum[r][t];
}
template <int R, int T, bool kFetch>
double run(int64_t K, int64_t M, long reps) {
  const int64_t pairs = K / 2;
  std::vector<uint32_t> w(pairs * T * 16, 0x3c003c00), x(M * pairs, 0x3c003c00), next(pairs * T * 16, 1);
  std::vector<float> y(M * T * 16);
  __m512 acc[R * T];
  const int64_t tiles = M / R;
  const int64_t share = (int64_t(next.size()) * 4 / 64 + tiles - 2) / (tiles - 1);
  Fetch f{(const char*)next.data(), (uint64_t(share) << 32) / pairs, int((share + pairs - 1) / pairs)};
  double t = now();
  for (long it = 0; it < reps; ++it)
    for (int64_t i = 0; i < tiles; ++i) {
      row_tile<R, T, kFetch>(x.data() + i * R * pairs, pairs, w.data(), pairs, f, acc);
      for (int j = 0; j < R * T; ++j) _mm512_storeu_ps(y.data() + (j % (M * T)) * 16 % y.size(), acc[j]);
    }
  double s = now() - t;
  return reps * double(tiles * R) * K * T * 16 / s * 1e-9;
}
int main(int argc, char** argv) {
  const int64_t K = argc > 1 ? atoi(argv[1]) : 576, M = 480;
  const long reps = 400;
  printf("K=%ld: T2 R8 fetch %.1f, T2 R8 no fetch %.1f, T2 R12 fetch %.1f, T2 R12 no fetch %.1f, T2 R10 %.1f\n", K,
         run<8, 2, true>(K, M, reps), run<8, 2, false>(K, M, reps), run<12, 2, true>(K, M, reps), run<12, 2, false>(K, M, reps), run<10, 2, true>(K, M, reps));
  printf("K=%ld: T3 R8 fetch %.1f, T3 R8 no fetch %.1f; T4 R6 fetch %.1f, T4 R6 no fetch %.1f\n", K,
         run<8, 3, true>(K, M, reps), run<8, 3, false>(K, M, reps), run<6, 4, true>(K, M, reps), run<6, 4, false>(K, M, reps));
}
