// AMX's pieces shared by the kernels that use its tiles (amx_linear.cpp, prefill_amx.h): the
// permission Linux asks for, the tile configuration, the compiler barrier GCC's intrinsics
// need, and `Tiles`, the few tile operations the prefill tile is written against, on AMX or
// emulated in plain C++ (`EmulatedTiles`, which tests run on CPUs without AMX).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace roseinfer::amx {

constexpr int kTileRows = 16;   // rows of a tile
constexpr int kTileBytes = 64;  // bytes of a tile row: 32 bf16 or 16 fp32

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
constexpr bool kBuilt = true;

// Linux hands out the 8 KB AMX register state only to processes that ask for it.
inline bool request() {
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  static const bool ok = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return ok;
}

struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// GCC's tile intrinsics are asm statements without memory operands: nothing tells the compiler
// that ldtilecfg and tileloadd read memory or that tilestored writes it, so it may drop or move
// the plain loads and stores around them. A compiler barrier at each hand-over keeps them in
// order (without one, GCC dropped the tile configuration's stores and ldtilecfg faulted).
inline void memory_barrier() { asm volatile("" : : : "memory"); }

// The 8 tiles, each 16 rows of 64 bytes, on AMX. `dot<C, A, B>`: C (16 x 16 fp32) += A (16 rows
// of 32 bf16) times B (16 rows of 16 bf16 pairs, AMX's "VNNI" layout: B[k][n] holds the pair
// (2k, 2k + 1) of column n). Tile numbers are template arguments: the instructions encode them.
struct AmxTiles {
  static void configure() {
    TileConfig cfg;
    for (int t = 0; t < 8; ++t) {
      cfg.colsb[t] = kTileBytes;
      cfg.rows[t] = kTileRows;
    }
    memory_barrier();
    _tile_loadconfig(&cfg);
  }
  static void release() { _tile_release(); }
  template <int T>
  static void zero();
  template <int T>
  static void load(const void* p, int64_t stride_bytes);
  template <int T>
  static void store(void* p, int64_t stride_bytes);
  template <int C, int A, int B>
  static void dot();
};

// GCC's tile intrinsics are macros that paste the tile number into the instruction's text (a
// template argument there does not assemble): each number the kernels use is spelled out. A
// load's barrier puts the plain stores of what it reads first; a store's, the plain loads of
// what it wrote after it.
#define ROSEINFER_AMX_TILE(T)                                                  \
  template <>                                                                  \
  inline void AmxTiles::zero<T>() {                                            \
    _tile_zero(T);                                                             \
  }                                                                            \
  template <>                                                                  \
  inline void AmxTiles::load<T>(const void* p, int64_t stride_bytes) {         \
    memory_barrier();                                                          \
    _tile_loadd(T, p, stride_bytes);                                           \
  }                                                                            \
  template <>                                                                  \
  inline void AmxTiles::store<T>(void* p, int64_t stride_bytes) {              \
    _tile_stored(T, p, stride_bytes);                                          \
    memory_barrier();                                                          \
  }
ROSEINFER_AMX_TILE(0)
ROSEINFER_AMX_TILE(1)
ROSEINFER_AMX_TILE(2)
ROSEINFER_AMX_TILE(3)
ROSEINFER_AMX_TILE(4)
ROSEINFER_AMX_TILE(5)
ROSEINFER_AMX_TILE(6)
ROSEINFER_AMX_TILE(7)
#undef ROSEINFER_AMX_TILE
#define ROSEINFER_AMX_DOT(C, A, B)          \
  template <>                               \
  inline void AmxTiles::dot<C, A, B>() {    \
    _tile_dpbf16ps(C, A, B);                \
  }
ROSEINFER_AMX_DOT(0, 4, 6)
ROSEINFER_AMX_DOT(1, 4, 7)
ROSEINFER_AMX_DOT(2, 5, 6)
ROSEINFER_AMX_DOT(3, 5, 7)
#undef ROSEINFER_AMX_DOT
#else
constexpr bool kBuilt = false;
inline bool request() { return false; }
#endif

// AmxTiles' operations in plain C++ on thread-local tiles, each product summed in fp32 pair by
// pair: slow, for checking the AMX tile's layouts where the CPU has no AMX.
struct EmulatedTiles {
  struct alignas(64) State {
    uint8_t tile[8][kTileRows * kTileBytes];
  };
  static State& state() {
    static thread_local State s;
    return s;
  }
  static float bf16(uint16_t x) {
    const uint32_t bits = static_cast<uint32_t>(x) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  static void configure() {}
  static void release() {}
  template <int T>
  static void zero() {
    std::memset(state().tile[T], 0, sizeof(state().tile[T]));
  }
  template <int T>
  static void load(const void* p, int64_t stride_bytes) {
    for (int r = 0; r < kTileRows; ++r)
      std::memcpy(state().tile[T] + r * kTileBytes, static_cast<const char*>(p) + r * stride_bytes,
                  kTileBytes);
  }
  template <int T>
  static void store(void* p, int64_t stride_bytes) {
    for (int r = 0; r < kTileRows; ++r)
      std::memcpy(static_cast<char*>(p) + r * stride_bytes, state().tile[T] + r * kTileBytes,
                  kTileBytes);
  }
  template <int C, int A, int B>
  static void dot() {
    float c[kTileRows * 16];
    uint16_t a[kTileRows * 32], b[kTileRows * 32];
    std::memcpy(c, state().tile[C], sizeof(c));
    std::memcpy(a, state().tile[A], sizeof(a));
    std::memcpy(b, state().tile[B], sizeof(b));
    for (int m = 0; m < kTileRows; ++m)
      for (int n = 0; n < 16; ++n) {
        float acc = c[m * 16 + n];
        for (int k = 0; k < 16; ++k)
          acc += bf16(a[m * 32 + 2 * k]) * bf16(b[k * 32 + 2 * n]) +
                 bf16(a[m * 32 + 2 * k + 1]) * bf16(b[k * 32 + 2 * n + 1]);
        c[m * 16 + n] = acc;
      }
    std::memcpy(state().tile[C], c, sizeof(c));
  }
};

}  // namespace roseinfer::amx
