// Do bulk software prefetches into L2 work on this host? A cold range of R bytes (after a stream,
// 256 MB unless a 4th argument gives its MB, evicted it): read time without prefetch (mode 0),
// after prefetcht1 / prefetcht0 / prefetcht2 every 64 B (1 / 2 / 3), after reading it with loads
// (4), or after reading it and then 4 MB of other data, so that it sits in L3 but not L2 (5);
// then a wait of W microseconds, then the timed read.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
int main(int argc, char** argv) {
  const size_t R = atoi(argv[1]) * 1024, big = (argc > 4 ? atoi(argv[4]) : 256) * (1u << 20);
  const int mode = atoi(argv[2]);
  const double wait = atof(argv[3]);
  char* buf = (char*)aligned_alloc(4096, 64u << 20);
  char* flush = (char*)aligned_alloc(4096, big);
  memset(buf, 1, 64u << 20); memset(flush, 2, big);
  std::vector<double> t, iss;
  volatile long sink = 0;
  for (int it = 0; it < 40; ++it) {
    char* r = buf + (size_t)(it % 32) * (2u << 20);
    __m512i acc = _mm512_setzero_si512();
    for (size_t i = 0; i < big; i += 64) acc = _mm512_add_epi32(acc, _mm512_load_si512(flush + i));
    sink += _mm512_reduce_add_epi32(acc);
    auto p0 = clk::now();
    if (mode) for (size_t i = 0; i < R; i += 64) {
      if (mode == 1) _mm_prefetch(r + i, _MM_HINT_T1);
      else if (mode == 2) _mm_prefetch(r + i, _MM_HINT_T0);
      else if (mode == 3) _mm_prefetch(r + i, _MM_HINT_T2);
      else if (mode == 4) sink += r[i];
    }
    if (mode == 5) {  // read the range, then 4 MB of other data: out of L2, still in L3
      for (size_t i = 0; i < R; i += 64) sink += r[i];
      __m512i a2 = _mm512_setzero_si512();
      for (size_t i = 0; i < (4u << 20); i += 64) a2 = _mm512_add_epi32(a2, _mm512_load_si512(flush + i));
      sink += _mm512_reduce_add_epi32(a2);
    }
    auto p1 = clk::now();
    while (us(p0, clk::now()) < wait) {}
    auto a = clk::now();
    __m512i s = _mm512_setzero_si512();
    for (size_t i = 0; i < R; i += 64) s = _mm512_add_epi32(s, _mm512_load_si512(r + i));
    auto b = clk::now();
    sink += _mm512_reduce_add_epi32(s);
    if (it >= 4) { t.push_back(us(a, b)); iss.push_back(us(p0, p1)); }
  }
  std::sort(t.begin(), t.end()); std::sort(iss.begin(), iss.end());
  printf("R=%zu KB mode %d wait %.0f us: read %.2f us (%.1f GB/s), issue %.2f us\n", R / 1024, mode, wait, t[t.size() / 2], R / t[t.size() / 2] / 1e3, iss[iss.size() / 2]);
  return (int)(sink & 0);
}
