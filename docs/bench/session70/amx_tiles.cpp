// AMX bf16 tile products on one core: do a step's tile loads wait for the last step's products
// to have read the tiles they overwrite? The 2x2 block (4 C tiles, its 2 A and 2 B tiles loaded
// again every step) against blocks of 2 C tiles whose A and B tiles alternate between two sets
// (the next step's loads go to tiles no product in flight reads), operands from L1.
//   g++ -O3 -march=native -o /tmp/amx_tiles docs/bench/session70/amx_tiles.cpp && /tmp/amx_tiles
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

struct Cfg {
  uint8_t palette = 1, start = 0, pad[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr double kFlop = 2.0 * 16 * 16 * 32;  // one tdpbf16ps
constexpr int KB = 18;                         // 576 / 32: steps over a row of x
constexpr long kSteps = 3000000;

int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
  Cfg cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  // x: 32 rows x 576 (two 16-row blocks), w: two 16-column blocks' tiles, all in L1 (36 + 36 KB
  // does not fit 48 KB: x is 36 KB, w 36 KB; L1 holds most, L2 the rest, as in amx_linear).
  std::vector<uint16_t> x(32 * KB * 32, 0x3f80), w(2 * KB * 512, 0x3f80);
  const uint16_t* x0 = x.data();
  const uint16_t* x1 = x.data() + 16 * KB * 32;
  const uint16_t* w0 = w.data();
  const uint16_t* w1 = w.data() + KB * 512;
  alignas(64) static float c[16 * 16];
  for (int rep = 0; rep < 3; ++rep) {
    {  // 2x2: C 0-3, A 4-5, B 6-7 loaded every step
      _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
      double t = now();
      for (long i = 0; i < kSteps; ++i) {
        const int kb = i % KB;
        _tile_loadd(4, x0 + kb * 32, KB * 64);
        _tile_loadd(6, w0 + kb * 512, 64);
        _tile_loadd(7, w1 + kb * 512, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, x1 + kb * 32, KB * 64);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("2x2, 4 loads / 4 products a step:            %5.0f GFLOP/s\n", 4 * kSteps * kFlop / t / 1e9);
    }
    {  // 1x2 in two sets: C 0-1; set 0: A 2, B 4-5; set 1: A 3, B 6-7
      _tile_zero(0); _tile_zero(1);
      double t = now();
      for (long i = 0; i < kSteps; i += 2) {
        const int k0 = i % KB, k1 = (i + 1) % KB;
        _tile_loadd(2, x0 + k0 * 32, KB * 64);
        _tile_loadd(4, w0 + k0 * 512, 64);
        _tile_loadd(5, w1 + k0 * 512, 64);
        _tile_dpbf16ps(0, 2, 4);
        _tile_dpbf16ps(1, 2, 5);
        _tile_loadd(3, x0 + k1 * 32, KB * 64);
        _tile_loadd(6, w0 + k1 * 512, 64);
        _tile_loadd(7, w1 + k1 * 512, 64);
        _tile_dpbf16ps(0, 3, 6);
        _tile_dpbf16ps(1, 3, 7);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("1x2 in two sets, 3 loads / 2 products:        %5.0f GFLOP/s\n", 2 * kSteps * kFlop / t / 1e9);
    }
    {  // 2x1 in two sets: C 0-1; set 0: A 2-3, B 4; set 1: A 5-6, B 7
      _tile_zero(0); _tile_zero(1);
      double t = now();
      for (long i = 0; i < kSteps; i += 2) {
        const int k0 = i % KB, k1 = (i + 1) % KB;
        _tile_loadd(4, w0 + k0 * 512, 64);
        _tile_loadd(2, x0 + k0 * 32, KB * 64);
        _tile_dpbf16ps(0, 2, 4);
        _tile_loadd(3, x1 + k0 * 32, KB * 64);
        _tile_dpbf16ps(1, 3, 4);
        _tile_loadd(7, w0 + k1 * 512, 64);
        _tile_loadd(5, x0 + k1 * 32, KB * 64);
        _tile_dpbf16ps(0, 5, 7);
        _tile_loadd(6, x1 + k1 * 32, KB * 64);
        _tile_dpbf16ps(1, 6, 7);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("2x1 in two sets, 3 loads / 2 products:        %5.0f GFLOP/s\n", 2 * kSteps * kFlop / t / 1e9);
    }
    {  // 2x2 with the step's loads issued before the last step's products (software pipelined):
       // C 0-3, A 4-5, B 6-7 -- the same tiles, loads moved: measures the order alone
      _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
      double t = now();
      for (long i = 0; i < kSteps; ++i) {
        const int kb = i % KB;
        _tile_loadd(4, x0 + kb * 32, KB * 64);
        _tile_loadd(5, x1 + kb * 32, KB * 64);
        _tile_loadd(6, w0 + kb * 512, 64);
        _tile_loadd(7, w1 + kb * 512, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("2x2, loads first:                             %5.0f GFLOP/s\n", 4 * kSteps * kFlop / t / 1e9);
    }
    {  // 1x2, one set (no alternation): C 0-1, A 2, B 4-5: 3 loads / 2 products, WAR each step
      _tile_zero(0); _tile_zero(1);
      double t = now();
      for (long i = 0; i < kSteps; ++i) {
        const int kb = i % KB;
        _tile_loadd(2, x0 + kb * 32, KB * 64);
        _tile_loadd(4, w0 + kb * 512, 64);
        _tile_loadd(5, w1 + kb * 512, 64);
        _tile_dpbf16ps(0, 2, 4);
        _tile_dpbf16ps(1, 2, 5);
      }
      t = now() - t;
      _tile_stored(0, c, 64);
      printf("1x2 one set, 3 loads / 2 products:            %5.0f GFLOP/s\n", 2 * kSteps * kFlop / t / 1e9);
    }
  }
  _tile_release();
}
