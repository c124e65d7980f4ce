// AMX bf16 tile products on one core, SmolLM2's K = 576: can blocking over K (C partials stored
// and loaded again between K blocks) feed the 2x2 register block from L1 instead of L2?
// - "stream": amx_linear's scheme, x (32 rows x 576) loaded per pass, the pass's weights (32
//   columns x 576, 36 KB) reused across 8 chunks of 32 rows (x 288 KB per block, from L2);
// - "kblock Kc": a 64-row x 64-column block of outputs over K in blocks of Kc: per K block its
//   A panel (64 x Kc) and B panel (Kc x 64) stay in L1 while the four 2x2 register blocks run,
//   each loading its C tiles (after the first K block) and storing them after its steps.
//   g++ -O3 -march=native -o /tmp/amx_kblock docs/bench/session71/amx_kblock.cpp && /tmp/amx_kblock
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

struct Cfg {
  uint8_t palette = 1, start = 0, pad[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename T>
struct Buffer {
  T* p;
  Buffer(size_t n, T v) : p(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))) {
    for (size_t i = 0; i < n; ++i) p[i] = v;
  }
  ~Buffer() { std::free(p); }
  T* data() { return p; }
};

constexpr double kFlop = 2.0 * 16 * 16 * 32;  // one tdpbf16ps
constexpr int K = 576, KB = K / 32;
constexpr int M = 256, N = 960;  // rows of x per block, outputs (qkv's)

int main(int argc, char**) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  // x [M][K] bf16 rows; w packed [N/16][KB][16][32] as amx_linear packs it.
  // On 64-byte lines (std::vector's 16-byte alignment has every tile row straddle two lines).
  Buffer<uint16_t> x(M * K, 0x3f80), w(N / 16 * KB * 512, 0x3c00);
  Buffer<float> out(M * N, 0.f);
  // With an argument: random bf16 values in [-2, 2) (x) and [-1/16, 1/16) (w), not constants.
  if (argc > 1) {
    uint32_t state = 1;
    const auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int i = 0; i < M * K; ++i) x.data()[i] = uint16_t(0x3f80 | (next() >> 25)) ^ (next() & 0x8000);
    for (int i = 0; i < N / 16 * KB * 512; ++i) w.data()[i] = uint16_t(0x3d80 | (next() >> 25)) ^ (next() & 0x8000);
  }
  const int reps = 40;
  for (int round = 0; round < 3; ++round) {
    {  // stream: for each pass (32 columns) over the block's chunks of 32 rows
      double t = now();
      for (int r = 0; r < reps; ++r)
        for (int p = 0; p < N / 32; ++p) {
          const uint16_t* b0 = w.data() + (2 * p) * KB * 512;
          const uint16_t* b1 = b0 + KB * 512;
          for (int c = 0; c < M; c += 32) {
            _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
            const uint16_t* x0 = x.data() + c * K;
            const uint16_t* x1 = x0 + 16 * K;
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
            float* o = out.data() + c * N + p * 32;
            _tile_stored(0, o, N * 4); _tile_stored(1, o + 16, N * 4);
            _tile_stored(2, o + 16 * N, N * 4); _tile_stored(3, o + 16 * N + 16, N * 4);
          }
        }
      t = now() - t;
      printf("stream (amx_linear's):          %5.0f GFLOP/s\n", double(reps) * M * N * K * 2 / t / 1e9);
    }
    // The stream scheme with amx_linear's plain epilogue (each 16 fp32 results rounded to bf16,
    // as store16 rounds them, into y [M][N]): right after the chunk's tile stores ("now"), or the
    // last chunk's after this chunk's products are issued, before its stores ("deferred"), or
    // spread over this chunk's steps ("spread", as the SiLU·mul epilogue runs).
    for (int mode = 0; mode < 4; ++mode) {  // 3: the same tile stores, no epilogue
      Buffer<float> outs(2 * 32 * 32, 0.f);
      Buffer<uint16_t> y(M * N, 0);
      double t = now();
      for (int r = 0; r < reps; ++r)
        for (int p = 0; p < N / 32; ++p) {
          const uint16_t* b0 = w.data() + (2 * p) * KB * 512;
          const uint16_t* b1 = b0 + KB * 512;
          int pending_c = -1, cur = 0;
          auto epilogue_rows = [&](int c, const float* o, int r0, int r1) {
            for (int i = r0; i < r1; ++i)
              for (int j = 0; j < 32; j += 16) {
                const __m512 v = _mm512_loadu_ps(o + i * 32 + j);
                const __m512i bits = _mm512_castps_si512(v);
                const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
                __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
                const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7fc00000));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(y.data() + (c + i) * N + p * 32 + j),
                                    _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
              }
          };
          for (int c = 0; c < M; c += 32) {
            _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
            const uint16_t* x0 = x.data() + c * K;
            const uint16_t* x1 = x0 + 16 * K;
            const float* prev = outs.data() + (cur ^ 1) * 1024;
            for (int kb = 0; kb < KB; ++kb) {
              _tile_stream_loadd(4, x0 + kb * 32, K * 2);
              _tile_loadd(6, b0 + kb * 512, 64);
              _tile_loadd(7, b1 + kb * 512, 64);
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 4, 7);
              _tile_stream_loadd(5, x1 + kb * 32, K * 2);
              _tile_dpbf16ps(2, 5, 6);
              _tile_dpbf16ps(3, 5, 7);
              if (mode == 2 && pending_c >= 0) {  // 32 rows over 18 steps: 2 a step
                const int r0 = kb * 2, r1 = kb + 1 == KB ? 32 : std::min(32, kb * 2 + 2);
                epilogue_rows(pending_c, prev, r0, r1);
              }
            }
            if (mode == 1 && pending_c >= 0) epilogue_rows(pending_c, prev, 0, 32);
            float* o = outs.data() + cur * 1024;
            _tile_stored(0, o, 128); _tile_stored(1, o + 16, 128);
            _tile_stored(2, o + 16 * 32, 128); _tile_stored(3, o + 16 * 32 + 16, 128);
            asm volatile("" ::: "memory");
            if (mode == 0) epilogue_rows(c, o, 0, 32);
            else if (mode != 3) { pending_c = c; cur ^= 1; }
          }
          if (mode == 1 || mode == 2) epilogue_rows(pending_c, outs.data() + (cur ^ 1) * 1024, 0, 32);
        }
      t = now() - t;
      const char* names[] = {"now", "deferred", "spread", "none"};
      printf("stream + epilogue %-9s      %5.0f GFLOP/s\n", names[mode], double(reps) * M * N * K * 2 / t / 1e9);
    }
    for (int Kc : {64, 128, 192, 288}) {
      const int KcB = Kc / 32;
      double t = now();
      for (int r = 0; r < reps; ++r)
        for (int n0 = 0; n0 < N; n0 += 64)
          for (int m0 = 0; m0 < M; m0 += 64)
            for (int k0 = 0; k0 < KB; k0 += KcB)
              for (int mi = 0; mi < 64; mi += 32)
                for (int ni = 0; ni < 64; ni += 32) {
                  float* o = out.data() + (m0 + mi) * N + n0 + ni;
                  if (k0 == 0) {
                    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
                  } else {
                    _tile_loadd(0, o, N * 4); _tile_loadd(1, o + 16, N * 4);
                    _tile_loadd(2, o + 16 * N, N * 4); _tile_loadd(3, o + 16 * N + 16, N * 4);
                  }
                  const uint16_t* x0 = x.data() + (m0 + mi) * K;
                  const uint16_t* x1 = x0 + 16 * K;
                  const uint16_t* b0 = w.data() + ((n0 + ni) / 16) * KB * 512;
                  const uint16_t* b1 = b0 + KB * 512;
                  for (int kb = k0; kb < k0 + KcB; ++kb) {
                    _tile_loadd(4, x0 + kb * 32, K * 2);
                    _tile_loadd(6, b0 + kb * 512, 64);
                    _tile_loadd(7, b1 + kb * 512, 64);
                    _tile_dpbf16ps(0, 4, 6);
                    _tile_dpbf16ps(1, 4, 7);
                    _tile_loadd(5, x1 + kb * 32, K * 2);
                    _tile_dpbf16ps(2, 5, 6);
                    _tile_dpbf16ps(3, 5, 7);
                  }
                  _tile_stored(0, o, N * 4); _tile_stored(1, o + 16, N * 4);
                  _tile_stored(2, o + 16 * N, N * 4); _tile_stored(3, o + 16 * N + 16, N * 4);
                }
      t = now() - t;
      printf("kblock Kc %3d:                  %5.0f GFLOP/s\n", Kc, double(reps) * M * N * K * 2 / t / 1e9);
    }
  }
  _tile_release();
}
