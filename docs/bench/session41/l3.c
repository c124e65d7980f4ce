// L3 vs DRAM read rates on this host: a range read cold (after a 256 MB stream) or warmed
// (read once by one thread, or by both) before both threads read it, timed.
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static float sink;
static float read_range(const char* p, size_t n) {
  __m512 acc = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 64) acc = _mm512_add_ps(acc, _mm512_load_ps((const float*)(p + i)));
  return _mm512_reduce_add_ps(acc);
}
int main(int argc, char** argv) {
  size_t big = 256ul << 20;
  char* ev = aligned_alloc(64, big); memset(ev, 1, big);
  char* buf = aligned_alloc(64, 64ul << 20); memset(buf, 1, 64ul << 20);
  size_t sizes[] = {1ul << 20, 4ul << 20, 8ul << 20, 16ul << 20, 24ul << 20, 48ul << 20};
  for (int s = 0; s < 6; ++s) {
    size_t n = sizes[s];
    double tc = 0, tw1 = 0, tw2 = 0; int reps = 15;
    for (int r = 0; r < reps; ++r) {
      for (int mode = 0; mode < 3; ++mode) {
        #pragma omp parallel num_threads(2)
        { int t = omp_get_thread_num(); sink += read_range(ev + t * big / 2, big / 2); }
        if (mode == 1) sink += read_range(buf, n);                       // warmed by one thread
        if (mode == 2) {
          #pragma omp parallel num_threads(2)
          { int t = omp_get_thread_num(); sink += read_range(buf + t * n / 2, n / 2); }  // each its half
        }
        double t0 = now();
        #pragma omp parallel num_threads(2)
        { int t = omp_get_thread_num(); sink += read_range(buf + t * n / 2, n / 2); }
        double dt = now() - t0;
        if (mode == 0) tc += dt; else if (mode == 1) tw1 += dt; else tw2 += dt;
      }
    }
    printf("%2zu MB: cold %.1f GB/s, warmed by one thread %.1f, each its half %.1f\n", n >> 20,
           n * reps / tc / 1e9, n * reps / tw1 / 1e9, n * reps / tw2 / 1e9);
  }
  double t0 = now();
  #pragma omp parallel num_threads(2)
  { int t = omp_get_thread_num(); sink += read_range(ev + t * big / 2, big / 2); }
  printf("256 MB stream: %.1f GB/s (%f)\n", big / (now() - t0) / 1e9, sink);
}
