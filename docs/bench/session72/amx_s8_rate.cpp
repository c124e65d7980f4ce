// One core, SmolLM2's qkv shape (256 rows x 576 -> 960, x and weights in L2): amx_linear's
// scheme (a pass's 32 columns over chunks of 32 rows, x streamed) with bf16 tiles
// (tdpbf16ps, 32 k a step) against int8 tiles (tdpbssd, x and w as int8, 64 k a step), each
// with no epilogue (the tile stores only) and with a plain one into bf16 y (bf16: each 16 fp32
// results rounded; int8: the int32 sums to fp32, times the row's x scale and the columns' w
// scales, then rounded). GFLOP/s counts the matmul's 2 M N K either way.
//   g++ -O3 -march=native -o /tmp/amx_s8 docs/bench/session72/amx_s8_rate.cpp && /tmp/amx_s8
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

struct Cfg {
  uint8_t palette = 1, start = 0, pad[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename T>
T* lines(size_t n) {  // on 64-byte lines, filled with a pattern
  T* p = static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64));
  uint32_t state = 1;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    if constexpr (sizeof(T) == 1) p[i] = T(int(state >> 24) % 255 - 127);
    else if constexpr (sizeof(T) == 2) p[i] = T((0x3d80 | (state >> 25)) ^ (state & 0x8000));
    else p[i] = T(0);
  }
  return p;
}

constexpr int K = 576, M = 256, N = 960;

inline __m256i round_bf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7fc00000));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  uint16_t* xb = lines<uint16_t>(M * K);
  uint16_t* wb = lines<uint16_t>(N * K);  // [N/16][K/32][16][32]
  int8_t* xq = lines<int8_t>(M * K);
  int8_t* wq = lines<int8_t>(N * K);  // [N/16][K/64][16][64]
  float* xs = lines<float>(M);
  float* ws = lines<float>(N);
  for (int i = 0; i < M; ++i) xs[i] = 0.01f + i * 1e-5f;
  for (int i = 0; i < N; ++i) ws[i] = 0.002f + i * 1e-6f;
  float* outs = lines<float>(32 * 32);
  uint16_t* y = lines<uint16_t>(M * N);
  const int reps = 40;
  for (int round = 0; round < 3; ++round) {
    for (int s8 = 0; s8 < 2; ++s8)
      for (int epi = 0; epi < 2; ++epi) {
        const int step_k = s8 ? 64 : 32, KB = K / step_k;
        double t = now();
        for (int r = 0; r < reps; ++r)
          for (int p = 0; p < N / 32; ++p)
            for (int c = 0; c < M; c += 32) {
              _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
              if (s8) {
                const int8_t* x0 = xq + c * K;
                const int8_t* x1 = x0 + 16 * K;
                const int8_t* b0 = wq + (2 * p) * KB * 1024;
                const int8_t* b1 = b0 + KB * 1024;
                for (int kb = 0; kb < KB; ++kb) {
                  _tile_stream_loadd(4, x0 + kb * 64, K);
                  _tile_loadd(6, b0 + kb * 1024, 64);
                  _tile_loadd(7, b1 + kb * 1024, 64);
                  _tile_dpbssd(0, 4, 6);
                  _tile_dpbssd(1, 4, 7);
                  _tile_stream_loadd(5, x1 + kb * 64, K);
                  _tile_dpbssd(2, 5, 6);
                  _tile_dpbssd(3, 5, 7);
                }
              } else {
                const uint16_t* x0 = xb + c * K;
                const uint16_t* x1 = x0 + 16 * K;
                const uint16_t* b0 = wb + (2 * p) * KB * 512;
                const uint16_t* b1 = b0 + KB * 512;
                for (int kb = 0; kb < KB; ++kb) {
                  _tile_stream_loadd(4, x0 + kb * 32, K * 2);
                  _tile_loadd(6, b0 + kb * 512, 64);
                  _tile_loadd(7, b1 + kb * 512, 64);
                  _tile_dpbf16ps(0, 4, 6);
                  _tile_dpbf16ps(1, 4, 7);
                  _tile_stream_loadd(5, x1 + kb * 32, K * 2);
                  _tile_dpbf16ps(2, 5, 6);
                  _tile_dpbf16ps(3, 5, 7);
                }
              }
              _tile_stored(0, outs, 128); _tile_stored(1, outs + 16, 128);
              _tile_stored(2, outs + 512, 128); _tile_stored(3, outs + 528, 128);
              asm volatile("" ::: "memory");
              if (!epi) continue;
              for (int i = 0; i < 32; ++i)
                for (int j = 0; j < 32; j += 16) {
                  __m512 v;
                  if (s8) {
                    v = _mm512_cvtepi32_ps(_mm512_loadu_si512(outs + i * 32 + j));
                    v = _mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(xs[c + i])),
                                      _mm512_loadu_ps(ws + p * 32 + j));
                  } else {
                    v = _mm512_loadu_ps(outs + i * 32 + j);
                  }
                  _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + (c + i) * N + p * 32 + j),
                                      round_bf16(v));
                }
            }
        t = now() - t;
        printf("%s %-12s %5.0f GFLOP/s\n", s8 ? "int8 (tdpbssd) " : "bf16 (tdpbf16ps)",
               epi ? "+ epilogue" : "stores only", double(reps) * M * N * K * 2 / t / 1e9);
      }
  }
  _tile_release();
}
