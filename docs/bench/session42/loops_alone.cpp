// pair_scores / pair_values loops alone, L1-resident, one thread: GMAC/s for variants.
#include <immintrin.h>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <vector>
#include <x86intrin.h>
#include <cstdlib>
constexpr int kLanes = 16;
#ifndef RV
#define RV 2
#endif
constexpr int kRowVecs = RV;
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }

template <int NB, bool kMul>
[[gnu::noinline]] void pair_scores(const uint32_t* __restrict qp, int64_t RP, const uint32_t* const* key,
                        int64_t pairs, float scale, float* __restrict st, int64_t c) {
  __m512 acc[NB][kRowVecs];
  for (int j = 0; j < NB; ++j) for (int r = 0; r < kRowVecs; ++r) acc[j][r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh x[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r) x[r] = (__m512bh)_mm512_loadu_si512(qp + p * RP + c + r * kLanes);
    for (int j = 0; j < NB; ++j) {
      const __m512bh e = (__m512bh)_mm512_set1_epi32((int)key[j][p]);
      for (int r = 0; r < kRowVecs; ++r) acc[j][r] = _mm512_dpbf16_ps(acc[j][r], x[r], e);
    }
  }
  for (int j = 0; j < NB; ++j) {
    const __m512 s = _mm512_set1_ps(scale);
    for (int r = 0; r < kRowVecs; ++r)
      _mm512_storeu_ps(st + j * RP + c + r * kLanes, kMul ? _mm512_mul_ps(acc[j][r], s) : acc[j][r]);
  }
}
template <int DB>
[[gnu::noinline]] void pair_values(const uint32_t* __restrict pp, int64_t RP, const uint32_t* __restrict vt,
                        int64_t D, int64_t np, float* __restrict ot, int64_t c, int64_t d0) {
  __m512 acc[DB][kRowVecs];
  for (int i = 0; i < DB; ++i) for (int r = 0; r < kRowVecs; ++r) acc[i][r] = _mm512_loadu_ps(ot + (d0 + i) * RP + c + r * kLanes);
  for (int64_t k = 0; k < np; ++k) {
    __m512bh p[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r) p[r] = (__m512bh)_mm512_loadu_si512(pp + k * RP + c + r * kLanes);
    for (int i = 0; i < DB; ++i) {
      const __m512bh e = (__m512bh)_mm512_set1_epi32((int)vt[k * D + d0 + i]);
      for (int r = 0; r < kRowVecs; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], p[r], e);
    }
  }
  for (int i = 0; i < DB; ++i) for (int r = 0; r < kRowVecs; ++r) _mm512_storeu_ps(ot + (d0 + i) * RP + c + r * kLanes, acc[i][r]);
}
// Peak: independent dpbf16 chains, no loads.
[[gnu::noinline]] double peak(long iters) {
  __m512 a[16]; for (int i = 0; i < 16; ++i) a[i] = _mm512_set1_ps(i);
  __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = x;
  asm volatile("" : "+v"(x), "+v"(y));
  for (long it = 0; it < iters; ++it) for (int i = 0; i < 16; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, y);
  float s = 0; for (int i = 0; i < 16; ++i) s += a[i][0]; return s;
}
int main(int argc, char** argv) {
  const int64_t RP = 96, D = 64, pairs = D / 2, KT = 64;
  const int off = getenv("OFF") ? atoi(getenv("OFF")) : 0;  // floats past a 64-byte boundary
  struct Buf { std::vector<uint32_t> v; uint32_t* p; int64_t n; uint32_t* data() { return p; } const uint32_t* data() const { return p; } };
  auto mk = [&](int64_t n, uint32_t fill) { Buf b; b.v.assign(n + 64, fill); uintptr_t a = ((uintptr_t)b.v.data() + 63) & ~uintptr_t(63); b.p = (uint32_t*)a + off; b.n = n; return b; };
  auto qp = mk(pairs * RP, 0x3f803f80), kp = mk(KT * pairs, 0x3c003c00), pp = mk(KT / 2 * RP, 0x3c003c00), vt = mk(KT / 2 * D, 0x3c003c00);
  struct FBuf { std::vector<float> v; float* p; float* data() { return p; } };
  auto mkf = [&](int64_t n) { FBuf b; b.v.assign(n + 64, 0.f); uintptr_t a = ((uintptr_t)b.v.data() + 63) & ~uintptr_t(63); b.p = (float*)a + off; return b; };
  auto st = mkf(KT * RP), ot = mkf(D * RP);
  const uint32_t* keys[KT]; for (int j = 0; j < KT; ++j) keys[j] = kp.data() + j * pairs;
  const long reps = 20000;
  double t = now(); peak(reps * 100); double tp = now() - t;
  printf("peak dpbf16: %.1f GMAC/s\n", reps * 100.0 * 16 * 32 / tp * 1e-9);
  for (int m = 0; m < 2; ++m) {
    t = now();
    for (long it = 0; it < reps; ++it)
      for (int64_t c = 0; c < RP; c += RV * 16)
        for (int64_t j = 0; j < KT; j += 8)
          m ? pair_scores<8, true>(qp.data(), RP, keys + j, pairs, 0.5f, st.data() + j * RP, c)
            : pair_scores<8, false>(qp.data(), RP, keys + j, pairs, 0.5f, st.data() + j * RP, c);
    double ts = now() - t;
    printf("scores mul=%d: %.1f GMAC/s\n", m, reps * double(RP * KT * D) / ts * 1e-9);
  }
  {
    // keys from a paged cache: 2048 keys in blocks of 16 rows of [KVH=3][16][64] bf16, scattered
    const int64_t NB = 128 * 3;  // blocks of the whole cache (3 heads interleaved)
    std::vector<uint16_t> cache(NB * 3 * 16 * 64, 0x3c00);
    std::vector<int> order(128); for (int i = 0; i < 128; ++i) order[i] = (i * 37) % 128 * 3;
    const int mode = argc > 1 ? atoi(argv[1]) : 0;
    const long r2 = reps / 32;
    uint64_t cyc[3] = {0, 0, 0};
    t = now();
    for (long it = 0; it < r2; ++it)
      for (int64_t t0 = 0; t0 < 2048; t0 += KT) {
        const uint32_t* kk[KT];
        for (int j = 0; j < KT; ++j) { int64_t tt = t0 + j; kk[j] = (const uint32_t*)(cache.data() + ((order[tt / 16] * 3 + 1) * 16 + tt % 16) * 64); }
        if (mode == 1) for (int j = 0; j < KT; ++j) { _mm_prefetch((const char*)kk[j], _MM_HINT_T0); _mm_prefetch((const char*)kk[j] + 64, _MM_HINT_T0); }
        uint64_t a = __rdtsc();
        for (int64_t c = 0; c < RP; c += RV * 16)
          for (int64_t j = 0; j < KT; j += 8)
            pair_scores<8, true>(qp.data(), RP, kk + j, pairs, 0.5f, st.data() + j * RP, c);
        uint64_t b = __rdtsc(); cyc[0] += b - a;
        if (mode >= 2) {  // fake softmax: st -> pp as bf16 pairs
          for (int64_t k = 0; k < KT / 2; ++k)
            for (int64_t c = 0; c < RP; c += 16) {
              __m512 e0 = _mm512_loadu_ps(st.data() + 2 * k * RP + c), e1 = _mm512_loadu_ps(st.data() + (2 * k + 1) * RP + c);
              _mm512_storeu_si512(pp.data() + k * RP + c, (__m512i)_mm512_cvtne2ps_pbh(e1, e0));
            }
          uint64_t c2 = __rdtsc(); cyc[1] += c2 - b; b = c2;
          for (int64_t c = 0; c < RP; c += RV * 16)
            for (int64_t d = 0; d < D; d += 8) pair_values<8>(pp.data(), RP, vt.data(), D, KT / 2, ot.data(), c, d);
          cyc[2] += __rdtsc() - b;
        }
      }
    double tk = now() - t;
    printf("scores, paged keys (mode %d): %.1f GMAC/s\n", mode, r2 * 32.0 * double(RP * KT * D) / tk * 1e-9);
    const double macs = r2 * 32.0 * double(RP * KT * D), hz = 2.596e9;
    printf("  by phase: scores %.1f GMAC/s, softmax-ish %.2f ms, values %.1f GMAC/s\n", macs / (cyc[0] / hz) * 1e-9, cyc[1] / hz * 1e3, macs / (cyc[2] / hz) * 1e-9);
  }
  t = now();
  for (long it = 0; it < reps; ++it)
    for (int64_t c = 0; c < RP; c += RV * 16)
      for (int64_t d = 0; d < D; d += 8) pair_values<8>(pp.data(), RP, vt.data(), D, KT / 2, ot.data(), c, d);
  double tv = now() - t;
  printf("values: %.1f GMAC/s\n", reps * double(RP * KT * D) / tv * 1e-9);
}
