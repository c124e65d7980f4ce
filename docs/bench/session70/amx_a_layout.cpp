#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>
struct Cfg { uint8_t palette = 1, start = 0, pad[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr double kFlop = 2.0 * 16 * 16 * 32;
int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg cfg; for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  alignas(64) static float c[256];
  for (int KB : {8, 18, 48}) for (int rep = 0; rep < 2; ++rep) {
    const long steps = 3000000;
    std::vector<uint16_t> x(32 * KB * 32, 0x3f80), xt(32 * KB * 32, 0x3f80), w(2 * KB * 512, 0x3f80);
    const uint16_t *x0 = x.data(), *x1 = x.data() + 16 * KB * 32, *w0 = w.data(), *w1 = w.data() + KB * 512;
    const uint16_t *t0 = xt.data(), *t1 = xt.data() + KB * 512;  // tiled x: [rb][kb][16][32]
    for (int mode = 0; mode < 3; ++mode) {
      _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
      double t = now();
      for (long i = 0; i < steps; ++i) {
        const int kb = i % KB;
        if (mode == 0) { _tile_loadd(4, x0 + kb * 32, KB * 64); }
        else if (mode == 1) { _tile_loadd(4, t0 + kb * 512, 64); }
        else { _tile_stream_loadd(4, x0 + kb * 32, KB * 64); }
        _tile_loadd(6, w0 + kb * 512, 64);
        _tile_loadd(7, w1 + kb * 512, 64);
        _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
        if (mode == 0) { _tile_loadd(5, x1 + kb * 32, KB * 64); }
        else if (mode == 1) { _tile_loadd(5, t1 + kb * 512, 64); }
        else { _tile_stream_loadd(5, x1 + kb * 32, KB * 64); }
        _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("K %4d (x %2d KB, w %2d KB) A %s: %5.0f GFLOP/s\n", KB * 32, KB * 2, KB * 2,
             mode == 0 ? "strided   " : mode == 1 ? "tiled     " : "strided T1", 4 * steps * kFlop / t / 1e9);
    }
  }
  _tile_release();
}
