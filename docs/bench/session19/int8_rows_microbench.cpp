// One row of x against int8 weights [N = 3072, K], 2 threads, weights cold (134 MB cycled in
// calls of one [N, K] matrix each), modes in turns: (0) widened to fp32 + FMA (as int8_linear's
// dot_row at M = 1), (1) x rounded to int16 per block of BLOCK inputs, vpmovsxbw + vpmaddwd +
// vpaddd, one fp32 FMA per block, (2-5) the bytes only read (software prefetch 2 KB ahead into
// L1, none, 8 KB into L2, 512 B into L1). ONE_REGION=1: mode 3's calls in one OpenMP region;
// BIGN=1: one call over all 134 MB.
//   g++ -O3 -mavx2 -mfma -mf16c -fopenmp -DBLOCK=192 int8_rows_microbench.cpp -o bench
//   OMP_NUM_THREADS=2 ./bench 576; OMP_NUM_THREADS=2 ./bench 1536
#include <immintrin.h>
#include <omp.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#include <random>

static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static inline __m256 ld8(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)p)));
}
template <int P>
float read_only(const int8_t* w, int64_t K) {
  __m256i acc = _mm256_setzero_si256();
  for (int64_t k = 0; k < K; k += 32) {
    if (P == 1 && k % 64 == 0) _mm_prefetch((const char*)(w + k + 2048), _MM_HINT_T0);
    if (P == 2 && k % 64 == 0) _mm_prefetch((const char*)(w + k + 8192), _MM_HINT_T1);
    if (P == 3 && k % 64 == 0) _mm_prefetch((const char*)(w + k + 512), _MM_HINT_T0);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i*)(w + k)), _mm256_setzero_si256()));
  }
  return float(_mm256_extract_epi64(acc, 0) + _mm256_extract_epi64(acc, 1) + _mm256_extract_epi64(acc, 2) + _mm256_extract_epi64(acc, 3));
}
float dot_float(const float* x, int64_t K, const int8_t* w) {
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; k += 64) {
    _mm_prefetch((const char*)(w + k + 2048), _MM_HINT_T0);
    for (int a = 0; a < 8; ++a) acc[a] = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8 * a), ld8(w + k + 8 * a), acc[a]);
  }
  for (int a = 1; a < 8; ++a) acc[0] = _mm256_add_ps(acc[0], acc[a]);
  return hsum(acc[0]);
}
template <int B>
float dot_int16(const int16_t* xq, const float* xs, int64_t K, const int8_t* w) {
  __m256 accf = _mm256_setzero_ps();
  for (int64_t b = 0; b < K; b += B) {
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    for (int64_t k = b; k < b + B; k += 32) {
      if (k % 64 == 0) _mm_prefetch((const char*)(w + k + 2048), _MM_HINT_T0);
      const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(w + k)));
      const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(w + k + 16)));
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(w0, _mm256_loadu_si256((const __m256i*)(xq + k))));
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(w1, _mm256_loadu_si256((const __m256i*)(xq + k + 16))));
    }
    accf = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc0, acc1)), _mm256_set1_ps(xs[b / B]), accf);
  }
  return hsum(accf);
}
int main(int argc, char** argv) {
  const int64_t K = argc > 1 ? atoll(argv[1]) : 576, N = getenv("BIGN") ? 134000000 / K : 3072;
  const int64_t copies = 134000000 / (N * K);
  std::vector<int8_t> w(copies * N * K);
  std::mt19937 rng(0);
  for (auto& v : w) v = int8_t(int(rng() % 255) - 127);
  std::vector<float> x(K), y(N);
  for (auto& v : x) v = std::normal_distribution<float>()(rng);
  constexpr int B = BLOCK;
  std::vector<int16_t> xq(K); std::vector<float> xs(K / B);
  for (int64_t b = 0; b < K / B; ++b) {
    float mx = 0; for (int64_t k = b * B; k < (b + 1) * B; ++k) mx = std::max(mx, std::fabs(x[k]));
    xs[b] = mx / 32767; for (int64_t k = b * B; k < (b + 1) * B; ++k) xq[k] = int16_t(std::nearbyint(x[k] / xs[b]));
  }
  for (int rep = 0; rep < 3; ++rep) for (int mode = 0; mode < 6; ++mode) {
    auto t0 = std::chrono::steady_clock::now();
    if (getenv("ONE_REGION")) {
#pragma omp parallel
    for (int64_t c = 0; c < copies; ++c) {
      const int8_t* wc = w.data() + c * N * K;
#pragma omp for schedule(static) nowait
      for (int64_t n = 0; n < N; ++n)
        y[n] = read_only<0>(wc + n * K, K);
    }
    } else
    for (int64_t c = 0; c < copies; ++c) {
      const int8_t* wc = w.data() + c * N * K;
#pragma omp parallel for schedule(static)
      for (int64_t n = 0; n < N; ++n)
        y[n] = mode == 0 ? dot_float(x.data(), K, wc + n * K) : mode == 1 ? dot_int16<B>(xq.data(), xs.data(), K, wc + n * K) : mode == 2 ? read_only<1>(wc + n * K, K) : mode == 3 ? read_only<0>(wc + n * K, K) : mode == 4 ? read_only<2>(wc + n * K, K) : read_only<3>(wc + n * K, K);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double ref = 0; for (int64_t k = 0; k < K; ++k) ref += double(x[k]) * w[(copies - 1) * N * K + (N - 1) * K + k];
    printf("%s K=%ld: %.2f ms, %.1f GB/s (y[N-1] %.4f ref %.4f)\n", mode == 0 ? "float       " : mode == 1 ? "int16       " : mode == 2 ? "read pf2K-T0" : mode == 3 ? "read nopf   " : mode == 4 ? "read pf8K-T1" : "read pf512-T0", K, s * 1e3, copies * N * K / s / 1e9, y[N - 1], ref);
  }
}
