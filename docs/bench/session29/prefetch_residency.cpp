// Do bulk software prefetches into L2 work on this host? A cold range of R bytes (after a 256 MB
// stream evicted it): read time without prefetch, and after prefetching it (prefetcht1 every 64 B)
// then spinning W microseconds.
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
  const size_t R = atoi(argv[1]) * 1024, big = 256u << 20;
  const int mode = atoi(argv[2]);  // 0 no prefetch, 1 prefetcht1, 2 prefetcht0, 3 prefetcht2
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
      else sink += r[i];
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
