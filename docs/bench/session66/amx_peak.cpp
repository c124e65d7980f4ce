// AMX bf16 tile products on one core of this host: the peak (operands held in tiles), the 2x2
// block with its operands loaded from L1 every step, and SmolLM2's gate_up at 32-row chunks
// as amx_linear's pass_32 runs it (x from a 512-row buffer, weights of one 32-column pass).
//   g++ -O3 -march=native -o /tmp/amx_peak docs/bench/session66/amx_peak.cpp && /tmp/amx_peak
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

struct Cfg {
  uint8_t palette = 1, start = 0, pad[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
  Cfg cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  alignas(64) static uint16_t a[16 * 32], b[16 * 32];
  alignas(64) static float c[16 * 16 * 4];
  for (int i = 0; i < 512; ++i) a[i] = b[i] = 0x3f80;
  const double flop_per = 2.0 * 16 * 16 * 32;
  {  // peak: operands in tiles
    _tile_loadd(4, a, 64); _tile_loadd(5, a, 64); _tile_loadd(6, b, 64); _tile_loadd(7, b, 64);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    const long n = 20000000;
    double t = now();
    for (long i = 0; i < n; ++i) {
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    t = now() - t;
    _tile_stored(0, c, 64);
    printf("peak (tiles held): %.0f GFLOP/s one core\n", 4 * n * flop_per / t / 1e9);
  }
  {  // 2x2 with A and B loaded every step from L1
    std::vector<uint16_t> x(16 * 2 * 32 * 18, 0x3f80), w(2 * 18 * 512, 0x3f80);
    const long n = 2000000;
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    double t = now();
    for (long i = 0; i < n; ++i) {
      const int kb = i % 18;
      _tile_loadd(4, x.data() + kb * 32, 18 * 64);
      _tile_loadd(5, x.data() + 16 * 18 * 32 + kb * 32, 18 * 64);
      _tile_loadd(6, w.data() + kb * 512, 64);
      _tile_loadd(7, w.data() + (18 + kb) * 512, 64);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    t = now() - t;
    _tile_stored(0, c, 64);
    printf("2x2, A and B loaded each step from L1 (36 KB): %.0f GFLOP/s\n", 4 * n * flop_per / t / 1e9);
  }
  for (int hint : {0, 1}) {  // 2x2 with A and B loaded each step from L1, B with or without the hint
    std::vector<uint16_t> x(16 * 2 * 32 * 18, 0x3f80), w(2 * 18 * 512, 0x3f80);
    const long n = 2000000;
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    double t = now();
    for (long i = 0; i < n; ++i) {
      const int kb = i % 18;
      _tile_stream_loadd(4, x.data() + kb * 32, 18 * 64);
      if (hint) _tile_stream_loadd(6, w.data() + kb * 512, 64);
      else _tile_loadd(6, w.data() + kb * 512, 64);
      if (hint) _tile_stream_loadd(7, w.data() + (18 + kb) * 512, 64);
      else _tile_loadd(7, w.data() + (18 + kb) * 512, 64);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
      _tile_stream_loadd(5, x.data() + 16 * 18 * 32 + kb * 32, 18 * 64);
      _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    t = now() - t;
    _tile_stored(0, c, 64);
    printf("2x2 interleaved, A hinted, B %s: %.0f GFLOP/s\n", hint ? "hinted" : "plain",
           4 * n * flop_per / t / 1e9);
  }
  // pass_32's pattern: 32-row chunks of x (rows x 576) against one pass's 36 KB of weights,
  // x's tiles loaded with or without the non-temporal hint.
  for (int K : {576, 1536})
  for (int stream : {1, 0})
    for (int rows : {512, 256, 128, 64, 32}) {
      const int KB = K / 32;
      std::vector<uint16_t> x(rows * K, 0x3f80), w(2 * KB * 512, 0x3f80);
      alignas(64) static float out[32 * 32];
      long tmuls = 0;
      double t = now();
      for (int rep = 0; rep < 20000 * 32 / rows; ++rep)
        for (int r0 = 0; r0 < rows; r0 += 32) {
          _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
          for (int kb = 0; kb < KB; ++kb) {
            if (stream) _tile_stream_loadd(4, x.data() + r0 * K + kb * 32, K * 2);
            else _tile_loadd(4, x.data() + r0 * K + kb * 32, K * 2);
            _tile_loadd(6, w.data() + kb * 512, 64);
            _tile_loadd(7, w.data() + (KB + kb) * 512, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
            if (stream) _tile_stream_loadd(5, x.data() + (r0 + 16) * K + kb * 32, K * 2);
            else _tile_loadd(5, x.data() + (r0 + 16) * K + kb * 32, K * 2);
            _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
          }
          _tile_stored(0, out, 128); _tile_stored(1, out + 16, 128);
          _tile_stored(2, out + 512, 128); _tile_stored(3, out + 528, 128);
          tmuls += 4 * KB;
        }
      t = now() - t;
      printf("pass_32 pattern, x %3d rows x %d (%s), w %d KB: %.0f GFLOP/s\n", rows, K,
             stream ? "stream loads" : "plain loads", K / 16, tmuls * flop_per / t / 1e9);
    }
  _tile_release();
}
