// Does streaming 134 MB with prefetchnta ahead of the loads leave a 4.6 MB range in L3 (Zen 5)?
// Two threads: each warms its half of R, then streams its half of W (normal loads, or
// prefetchnta DIST bytes ahead + loads), then R is read back, timed.
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static float sink;
static float rd(const char* p, size_t n) {
  __m512 a = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 64) a = _mm512_add_ps(a, _mm512_load_ps((const float*)(p + i)));
  return _mm512_reduce_add_ps(a);
}
static float rd_nta(const char* p, size_t n, size_t dist) {
  __m512 a = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 64) {
    _mm_prefetch(p + i + dist, _MM_HINT_NTA);
    a = _mm512_add_ps(a, _mm512_load_ps((const float*)(p + i)));
  }
  return _mm512_reduce_add_ps(a);
}
int main() {
  size_t R = 4600u << 10, W = 134u << 20;
  char* r = aligned_alloc(64, R); char* w = aligned_alloc(64, W + (1 << 20));
  memset(r, 1, R); memset(w, 1, W + (1 << 20));
  for (int rep = 0; rep < 3; ++rep)
  for (int mode = 0; mode < 4; ++mode) {
    size_t dist = mode == 1 ? 1024 : mode == 2 ? 4096 : 16384;
    double ts = 0, tr = 0;
    for (int it = 0; it < 10; ++it) {
      #pragma omp parallel num_threads(2)
      { int t = omp_get_thread_num(); sink += rd(r + t * R / 2, R / 2); }
      double t0 = now();
      #pragma omp parallel num_threads(2)
      { int t = omp_get_thread_num();
        if (mode == 0) sink += rd(w + t * W / 2, W / 2); else sink += rd_nta(w + t * W / 2, W / 2, dist); }
      double t1 = now();
      #pragma omp parallel num_threads(2)
      { int t = omp_get_thread_num(); sink += rd(r + t * R / 2, R / 2); }
      double t2 = now();
      ts += t1 - t0; tr += t2 - t1;
    }
    printf("mode %d (%s): stream %.1f GB/s, then R read at %.1f GB/s\n", mode, mode == 0 ? "loads" : mode == 1 ? "nta 1K ahead" : mode == 2 ? "nta 4K ahead" : "nta 16K ahead",
           W * 10 / ts / 1e9, R * 10 / tr / 1e9);
  }
  printf("%f\n", sink);
}
