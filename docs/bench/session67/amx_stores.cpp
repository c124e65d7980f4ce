// What AMX's tile stores cost in the prefill attention's products (one core, K = 64: 2 steps of
// 32, a head of 64), from session 66's amx_peak.cpp: the scores' C tiles stored into [64 keys]
// [192 rows] (48 KB: the whole task's rows, session 66's layout) against the same with A's tiles
// held and C's traffic taken away piece by piece, and a 32-row block whose scores and outputs
// (8 KB each) stay in L1 (the layout of prefill_amx.h since session 67).
//   g++ -O3 -march=native -o /tmp/amx_stores docs/bench/session67/amx_stores.cpp && /tmp/amx_stores
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

struct Cfg {
  uint8_t palette = 1, start = 0, pad[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
constexpr int RP = 192, KEYS = 64, D = 64;
alignas(64) static uint16_t keys[2048 * D];          // A for QK: a KV head's 2,048 keys (256 KB)
alignas(64) static uint32_t qp[D / 2 * RP];          // B for QK: the queries as pairs [D/2][RP]
alignas(64) static float st[KEYS * RP];              // C for QK: [keys][RP], 48 KB
alignas(64) static uint32_t vtt[32 * D * KEYS / 2];  // A for PV: 32 key tiles' [D][keys/2]
alignas(64) static uint32_t pp[KEYS / 2 * RP];       // B for PV: weights as pairs
alignas(64) static float ot[D * RP];                 // C for PV: [D][RP], 48 KB
static int kt = 0;

// 2 x 2 blocks over a key tile's 64 keys and RP rows (session 66's prefill_amx.h): C zeroed,
// 2 steps, stored into st.
static long scores_2x2() {
  const char* A = reinterpret_cast<const char*>(keys + kt * KEYS * D);
  long dots = 0;
  for (int col = 0; col < RP; col += 32)
    for (int i = 0; i < KEYS / 16; i += 2) {
      float* c0 = st + i * 16 * RP + col;
      float* c1 = c0 + 16 * RP;
      _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
      for (int s = 0; s < 2; ++s) {
        _tile_loadd(4, A + i * 16 * 128 + s * 64, 128);
        _tile_loadd(5, A + (i + 1) * 16 * 128 + s * 64, 128);
        _tile_loadd(6, qp + s * 16 * RP + col, RP * 4);
        _tile_loadd(7, qp + s * 16 * RP + col + 16, RP * 4);
        _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
        dots += 4;
      }
      _tile_stored(0, c0, RP * 4); _tile_stored(1, c0 + 16, RP * 4);
      _tile_stored(2, c1, RP * 4); _tile_stored(3, c1 + 16, RP * 4);
    }
  return dots;
}

// A's 4 tiles (2 row blocks x 2 steps) held, B's 16-column blocks in turn; C's traffic: MODE 0
// zero and store into st, 1 none, 2 zero and store into the same 2 KB (L1-hot), 3 zero only,
// 4 store only.
template <int MODE>
static long scores_held_a() {
  const char* A = reinterpret_cast<const char*>(keys + kt * KEYS * D);
  alignas(64) static float hot[2][256];
  long dots = 0;
  for (int i = 0; i < KEYS / 16; i += 2) {
    _tile_loadd(4, A + i * 16 * 128, 128); _tile_loadd(5, A + i * 16 * 128 + 64, 128);
    _tile_loadd(6, A + (i + 1) * 16 * 128, 128); _tile_loadd(7, A + (i + 1) * 16 * 128 + 64, 128);
    float* c0 = st + i * 16 * RP;
    float* c1 = c0 + 16 * RP;
    for (int col = 0; col < RP; col += 16) {
      if (MODE == 0 || MODE == 2 || MODE == 3) { _tile_zero(0); _tile_zero(1); }
      _tile_loadd(2, qp + col, RP * 4); _tile_loadd(3, qp + 16 * RP + col, RP * 4);
      _tile_dpbf16ps(0, 4, 2); _tile_dpbf16ps(1, 6, 2); _tile_dpbf16ps(0, 5, 3); _tile_dpbf16ps(1, 7, 3);
      dots += 4;
      if (MODE == 0 || MODE == 4) { _tile_stored(0, c0 + col, RP * 4); _tile_stored(1, c1 + col, RP * 4); }
      if (MODE == 2) { _tile_stored(0, hot[0], 64); _tile_stored(1, hot[1], 64); }
    }
  }
  return dots;
}

// PV as session 66 ran it: 2 x 2 blocks over D x RP, C loaded from and stored to ot (48 KB).
static long outputs_2x2() {
  const char* V = reinterpret_cast<const char*>(vtt + kt * D * KEYS / 2);
  long dots = 0;
  for (int col = 0; col < RP; col += 32)
    for (int i = 0; i < D / 16; i += 2) {
      float* c0 = ot + i * 16 * RP + col;
      float* c1 = c0 + 16 * RP;
      _tile_loadd(0, c0, RP * 4); _tile_loadd(1, c0 + 16, RP * 4);
      _tile_loadd(2, c1, RP * 4); _tile_loadd(3, c1 + 16, RP * 4);
      for (int s = 0; s < 2; ++s) {
        _tile_loadd(4, V + i * 16 * 128 + s * 64, 128);
        _tile_loadd(5, V + (i + 1) * 16 * 128 + s * 64, 128);
        _tile_loadd(6, pp + s * 16 * RP + col, RP * 4);
        _tile_loadd(7, pp + s * 16 * RP + col + 16, RP * 4);
        _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
        dots += 4;
      }
      _tile_stored(0, c0, RP * 4); _tile_stored(1, c0 + 16, RP * 4);
      _tile_stored(2, c1, RP * 4); _tile_stored(3, c1 + 16, RP * 4);
    }
  return dots;
}

// One 32-row block's scores and outputs for a key tile, both products, 8 KB each (L1).
static long row_block() {
  alignas(64) static float st32[KEYS * 32], ot32[D * 32];
  alignas(64) static uint32_t pp32[KEYS / 2 * 32];
  const char* A = reinterpret_cast<const char*>(keys + kt * KEYS * D);
  const char* V = reinterpret_cast<const char*>(vtt + kt * D * KEYS / 2);
  long dots = 0;
  for (int i = 0; i < 4; i += 2) {
    float* c0 = st32 + i * 16 * 32;
    float* c1 = c0 + 16 * 32;
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int s = 0; s < 2; ++s) {
      _tile_loadd(4, A + i * 16 * 128 + s * 64, 128); _tile_loadd(5, A + (i + 1) * 16 * 128 + s * 64, 128);
      _tile_loadd(6, qp + s * 16 * RP, RP * 4); _tile_loadd(7, qp + s * 16 * RP + 16, RP * 4);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
      dots += 4;
    }
    _tile_stored(0, c0, 128); _tile_stored(1, c0 + 16, 128); _tile_stored(2, c1, 128); _tile_stored(3, c1 + 16, 128);
  }
  for (int i = 0; i < 4; i += 2) {
    float* c0 = ot32 + i * 16 * 32;
    float* c1 = c0 + 16 * 32;
    _tile_loadd(0, c0, 128); _tile_loadd(1, c0 + 16, 128); _tile_loadd(2, c1, 128); _tile_loadd(3, c1 + 16, 128);
    for (int s = 0; s < 2; ++s) {
      _tile_loadd(4, V + i * 16 * 128 + s * 64, 128); _tile_loadd(5, V + (i + 1) * 16 * 128 + s * 64, 128);
      _tile_loadd(6, pp32 + s * 16 * 32, 128); _tile_loadd(7, pp32 + s * 16 * 32 + 16, 128);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
      dots += 4;
    }
    _tile_stored(0, c0, 128); _tile_stored(1, c0 + 16, 128); _tile_stored(2, c1, 128); _tile_stored(3, c1 + 16, 128);
  }
  return dots;
}

template <typename F>
static void timeit(const char* name, F f) {
  for (int r = 0; r < 200; ++r) kt = (kt + 1) % 32, f();
  long dots = 0;
  const double t = now();
  for (int r = 0; r < 20000; ++r) kt = (kt + 1) % 32, dots += f();
  const double s = now() - t;
  printf("%-58s %5.0f GFLOP/s  %5.1f ns a product\n", name, dots * 2.0 * 16 * 16 * 32 / s / 1e9, s / dots * 1e9);
}

int main() {
  syscall(SYS_arch_prctl, 0x1023, 18);  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
  Cfg cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  for (auto& x : keys) x = 0x3f80;
  for (auto& x : qp) x = 0x3f803f80;
  for (auto& x : vtt) x = 0x3f803f80;
  for (auto& x : pp) x = 0x3f803f80;
  timeit("scores, 2x2 blocks, stored into 48 KB (session 66)", scores_2x2);
  timeit("scores, A held, zeroed and stored into 48 KB", scores_held_a<0>);
  timeit("scores, A held, no C traffic", scores_held_a<1>);
  timeit("scores, A held, zeroed and stored into 2 KB (L1-hot)", scores_held_a<2>);
  timeit("scores, A held, zeroed, not stored", scores_held_a<3>);
  timeit("scores, A held, stored into 48 KB, not zeroed", scores_held_a<4>);
  timeit("outputs, 2x2 blocks, loaded and stored in 48 KB (session 66)", outputs_2x2);
  timeit("a 32-row block, scores then outputs, 8 KB each (session 67)", row_block);
  _tile_release();
}
