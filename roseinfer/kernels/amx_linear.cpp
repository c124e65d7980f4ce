// Linear layers on AMX with bf16 x, fp32 accumulation: `amx_linear` (bf16 weights, decode
// batches and short prefill chunks: y = x @ w.T + bias) and `amx_int8_linear` (weight-only int8,
// any number of rows: y = (x @ w.T) * scale + bias). oneDNN does the bf16 matmuls with AMX but
// spends ~25 µs of set-up per call (121 calls per step) and reads the weights slower than the
// memory allows; these stream weights prepacked once into AMX's tile layout, each weight read
// from memory once per call.
//
// Tile layout of a packed weight w [N, K] (N % 16 == 0, K % 32 == 0): [N / 16, K / 32, 16, 32]
// in w's dtype (bf16 or int8), tile (nb, kb) holding w[16 nb + n][32 kb + 2 r + j] at [r][2 n + j]
// (AMX's "VNNI" B operand: pairs of consecutive k for each output column).
#include <ATen/Parallel.h>

#include <algorithm>
#include <type_traits>

#include "amx.h"
#include "line_storage.h"
#include "ops.h"
#include "parallel.h"
#include "vec.h"

namespace roseinfer {
namespace {

constexpr int64_t kTileRows = amx::kTileRows;  // rows of x (and k pairs of w) per tile
constexpr int64_t kTileK = amx::kTileBytes / 2;  // bf16 along k per tile row
constexpr int64_t kChunkRows = 32;  // rows of x per pass over a block of weight columns
// Rows of x per block of a call's passes (a multiple of kChunkRows; a call splits its rows
// evenly into blocks of about this many bytes of x): each pass runs over one block's rows,
// then over the next's. x's tiles are loaded with the non-temporal hint (see pass_32), which
// keeps ~300 KB of them in L2 but not 590 KB (a 512-row chunk of SmolLM2's 576 columns): there
// the hinted loads fall to half their rate (docs/bench/session66/amx_peak.cpp).
constexpr int64_t kBlockBytes = 256 * 1024;
// A thread's passes run in groups of at most this many bytes of weights as bf16, each group
// over every block of rows before the next group: the group's weights come from memory for the
// first block and stay in L2 (2 MB a core) beside the block of x for the others (int8 weights
// widened to bf16 by the first block, into a slot per pass: 2,000 rows -15 %, BENCHMARKS.md,
// session 66).
constexpr int64_t kGroupBytes = 1024 * 1024;
// From this many rows the threads split x's rows (each runs every pass over its share), not
// the passes (each reads all of x): the kernel before wrote x split by rows, and a row the other
// core wrote comes from that core's cache (a 2,000-token int8 prompt -5 %, BENCHMARKS.md,
// session 68). Below it the weights outweigh x, and each thread reading all of them (from
// memory once, the other's copy mostly from L3) costs more than it saves.
constexpr int64_t kRowSplitRows = 512;

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
using amx::memory_barrier, amx::TileConfig;

// Tiles: C accumulators 0-3, x (A) 4-5, weights (B) 6-7. With one 16-row block of x (m <= 16)
// a pass covers 4 column blocks (64 outputs); with two (m <= 32), 2 column blocks.
void configure_tiles(int64_t m) {
  TileConfig cfg;
  const uint8_t rows0 = static_cast<uint8_t>(std::min<int64_t>(m, kTileRows));
  const uint8_t rows1 = static_cast<uint8_t>(std::max<int64_t>(m - kTileRows, 1));
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = amx::kTileBytes;
  if (m <= kTileRows) {
    for (int t = 0; t < 4; ++t) cfg.rows[t] = rows0;
    cfg.rows[4] = rows0;
    cfg.rows[5] = rows0;  // unused
  } else {
    cfg.rows[0] = cfg.rows[1] = rows0;
    cfg.rows[2] = cfg.rows[3] = rows1;
    cfg.rows[4] = rows0;
    cfg.rows[5] = rows1;
  }
  cfg.rows[6] = cfg.rows[7] = kTileRows;
  memory_barrier();
  _tile_loadconfig(&cfg);
}

template <typename W>
inline void prefetch_tile(const W* tile) {
  const char* p = reinterpret_cast<const char*>(tile);
  for (int i = 0; i < 512 * int(sizeof(W)); i += 64) _mm_prefetch(p + i, _MM_HINT_T0);
}

constexpr int64_t kPrefetchTiles = 4;  // k tiles ahead, per column block, into L1

// Each column block's weights are also prefetched into L2 32 KB ahead of the tile being
// multiplied (a later block of the pass, or of the thread's next pass: a thread's passes read
// its blocks in memory order). L1 has few line-fill buffers and takes only the next few tiles.
// Near the end of the weights this asks for lines past them: prefetches never fault.
constexpr int64_t kL2AheadBytes = 32 * 1024;

template <typename W>
inline void prefetch_tile_l2(const W* tile) {
  const char* p = reinterpret_cast<const char*>(tile) + kL2AheadBytes;
  for (int i = 0; i < 512 * int(sizeof(W)); i += 64) _mm_prefetch(p + i, _MM_HINT_T1);
}

// Tile `kb` of a column block whose tiles start at `w`, in bf16: bf16 weights in place; int8
// ones widened into `dst` first (integers up to 127 in magnitude are exact in bf16, so the
// matmul is the int8 one). Widening next to the tile loads lets it overlap the memory reads.
inline const c10::BFloat16* b_tile(const c10::BFloat16* w, int64_t kb, c10::BFloat16*) {
  return w + kb * 512;
}
#if defined(__AVX512BF16__)
inline const c10::BFloat16* b_tile(const int8_t* w, int64_t kb, c10::BFloat16* dst) {
  const int8_t* src = w + kb * 512;
  for (int i = 0; i < 512; i += 32) {
    const __m512 lo = _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    const __m512 hi = _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16))));
    _mm512_storeu_si512(dst + i, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
  }
  // The tile load that follows reads these 1 KB (see memory_barrier): an empty asm that says it
  // reads them keeps the stores before it, without fencing every other access.
  asm volatile("" : : "m"(*reinterpret_cast<const char(*)[1024]>(dst)));
  return dst;
}
#endif

// Where b_tile puts block j's tile kb: with `widened` (a buffer for the pass's blocks in the
// packed bf16 layout, kept for the pass's next row chunks), there; else in a one-tile slot of
// `scratch` per block and parity of kb ([2][blocks][512]), reused every other kb.
inline c10::BFloat16* b_tile_dst(c10::BFloat16* widened, c10::BFloat16* scratch, int64_t KB,
                                 int blocks, int j, int64_t kb) {
  return widened != nullptr ? widened + (j * KB + kb) * 512
                            : scratch + ((kb & 1) * blocks + j) * 512;
}

// out [m, 64] fp32 (row stride 64) for column blocks nb0..nb0+3, m <= 16.
template <typename W>
void pass_16(const c10::BFloat16* x, int64_t K, const W* w, int64_t nb0, float* out) {
  const int64_t KB = K / kTileK, x_stride = K * 2;
  alignas(64) c10::BFloat16 scratch[4 * 512];
  const W* b[4];
  for (int j = 0; j < 4; ++j) b[j] = w + (nb0 + j) * KB * 512;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t kb = 0; kb < KB; ++kb) {
    if (kb + kPrefetchTiles < KB)
      for (int j = 0; j < 4; ++j) prefetch_tile(b[j] + (kb + kPrefetchTiles) * 512);
    for (int j = 0; j < 4; ++j) prefetch_tile_l2(b[j] + kb * 512);
    _tile_loadd(4, x + kb * kTileK, x_stride);
    _tile_loadd(6, b_tile(b[0], kb, scratch), 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b_tile(b[1], kb, scratch + 512), 64);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(6, b_tile(b[2], kb, scratch + 1024), 64);
    _tile_dpbf16ps(2, 4, 6);
    _tile_loadd(7, b_tile(b[3], kb, scratch + 1536), 64);
    _tile_dpbf16ps(3, 4, 7);
  }
  _tile_stored(0, out, 64 * 4);
  _tile_stored(1, out + 16, 64 * 4);
  _tile_stored(2, out + 32, 64 * 4);
  _tile_stored(3, out + 48, 64 * 4);
  memory_barrier();  // the caller reads `out`
}

// out [m, 32] fp32 (row stride 32) for column blocks nb0, nb0+1, m <= 32 (tiles configured by
// configure_tiles(m)): one or two 16-row blocks of x. int8 weights are widened into `widened`
// ([2, KB, 512]) when it is given, for the pass's next row chunks to run on as bf16.
// `stream_x`: x's tiles are loaded as non-temporal (TILELOADDT1), for a chunk of a call with
// more rows than L1 holds: each pass reads all of x once from L2, and without the hint x
// evicts the pass's weights, which every chunk of the pass reads again (120 linears at 512
// rows: bf16 62.0-62.2 -> 50.6-53.2 ms, int8 68.5-69.0 -> 59.3-61.8 ms).
// `from_memory`: w is read from memory (not the widened copy, or the bf16 weights of a prefill
// chunk after the first, which are in cache): only then are its tiles prefetched into L1 (the
// prefetches of tiles already in cache cost 1-4 % at 512 rows, bf16 and int8 alike:
// BENCHMARKS.md, session 66). `between(kb)` runs after step kb's products are
// issued: vector work (the previous chunk's epilogue) that the core does while the tiles
// multiply, where after the tile stores it would wait for them and they for it.
template <typename W, typename Between>
void pass_32(const c10::BFloat16* x, int64_t m, int64_t K, const W* w, int64_t nb0, float* out,
             bool from_memory, c10::BFloat16* widened, bool stream_x, const Between& between) {
  const int64_t KB = K / kTileK, x_stride = K * 2;
  const bool two = m > kTileRows;
  alignas(64) c10::BFloat16 scratch[2 * 2 * 512];
  const W* b0 = w + nb0 * KB * 512;
  const W* b1 = b0 + KB * 512;
  const c10::BFloat16* x1 = x + kTileRows * K;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  // int8 weights: the tiles of kb + 1 are widened while those of kb are multiplied, so their
  // stores have drained when the tile loads read them (120 linears at 32 rows: 8.0-8.3 ->
  // 7.4-7.6 ms; the same in pass_16 was 5 % slower at 1 row, so it widens in place).
  const c10::BFloat16* t0 = b_tile(b0, 0, b_tile_dst(widened, scratch, KB, 2, 0, 0));
  const c10::BFloat16* t1 = b_tile(b1, 0, b_tile_dst(widened, scratch, KB, 2, 1, 0));
  for (int64_t kb = 0; kb < KB; ++kb) {
    if (from_memory && kb + kPrefetchTiles < KB) {
      prefetch_tile(b0 + (kb + kPrefetchTiles) * 512);
      prefetch_tile(b1 + (kb + kPrefetchTiles) * 512);
    }
    if (from_memory) {
      prefetch_tile_l2(b0 + kb * 512);
      prefetch_tile_l2(b1 + kb * 512);
    }
    const c10::BFloat16 *n0 = nullptr, *n1 = nullptr;
    if (kb + 1 < KB) {
      n0 = b_tile(b0, kb + 1, b_tile_dst(widened, scratch, KB, 2, 0, kb + 1));
      n1 = b_tile(b1, kb + 1, b_tile_dst(widened, scratch, KB, 2, 1, kb + 1));
    }
    if (stream_x)
      _tile_stream_loadd(4, x + kb * kTileK, x_stride);
    else
      _tile_loadd(4, x + kb * kTileK, x_stride);
    _tile_loadd(6, t0, 64);
    _tile_loadd(7, t1, 64);
    t0 = n0;
    t1 = n1;
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    if (two) {
      if (stream_x)
        _tile_stream_loadd(5, x1 + kb * kTileK, x_stride);
      else
        _tile_loadd(5, x1 + kb * kTileK, x_stride);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    between(kb);
  }
  _tile_stored(0, out, 32 * 4);
  _tile_stored(1, out + 16, 32 * 4);
  if (two) {
    _tile_stored(2, out + 16 * 32, 32 * 4);
    _tile_stored(3, out + 16 * 32 + 16, 32 * 4);
  }
  memory_barrier();  // the caller reads `out`
}
#endif

}  // namespace

bool amx_linear_available() {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  return amx::request();
#else
  return false;
#endif
}

at::Tensor amx_pack_weight(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && (w.scalar_type() == at::kBFloat16 || w.scalar_type() == at::kChar),
              "amx_pack_weight: w must be bf16 or int8 [N, K]");
  const int64_t N = w.size(0), K = w.size(1);
  TORCH_CHECK(N % kTileRows == 0 && K % kTileK == 0,
              "amx_pack_weight: N must be a multiple of 16 and K of 32");
  // [N/16, 16, K/32, 16, 2] -> [N/16, K/32, 16 (k pairs), 16 (n), 2]
  return w.contiguous()
      .view({N / 16, 16, K / kTileK, 16, 2})
      .permute({0, 2, 3, 1, 4})
      .contiguous()
      .view({N / 16, K / kTileK, 16, 32});
}

namespace {

void check_amx_inputs(const at::Tensor& x, const at::Tensor& packed, at::ScalarType wtype,
                      const c10::optional<at::Tensor>& bias, const char* name) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == at::kBFloat16, name,
              ": x must be contiguous bf16 [M, K]");
  TORCH_CHECK(packed.scalar_type() == wtype, name, ": packed must hold ",
              wtype == at::kChar ? "int8" : "bf16", " weights (from amx_pack_weight)");
  TORCH_CHECK(packed.dim() == 4 && packed.is_contiguous() && packed.size(2) == 16 &&
                  packed.size(3) == 32 && packed.size(1) * kTileK == x.size(1),
              name, ": packed must come from amx_pack_weight for this K");
  TORCH_CHECK(x.size(0) >= 1, name, ": x has no rows");
  if (bias.has_value())
    TORCH_CHECK(bias->is_contiguous() && bias->numel() == packed.size(0) * 16 &&
                    bias->scalar_type() == at::kBFloat16,
                name, ": bias must be bf16 [N]");
  TORCH_CHECK(amx_linear_available(), name, ": this CPU or kernel offers no AMX");
}

// Where a pass's blocks of 16 outputs go: y [M, N] in order; or, for a gated projection's
// weights (`amx_pack_gated`: gate block j, then up block j; N = 2I), y [M, 2I] in order, or
// SiLU(gate) * up [M, I] with `silu_mul`.
struct Columns {
  int64_t N;
  bool gated = false, silu_mul = false;

  // The output column (the scale's and the bias's index too) of packed column n (n % 16 == 0).
  int64_t of(int64_t n) const { return gated ? (n / 16 % 2) * (N / 2) + n / 32 * 16 : n; }
};

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// Element (n, k) of a weight in the packed layout.
inline int64_t packed_index(int64_t n, int64_t k, int64_t K) {
  return (n / 16) * (K / kTileK) * 512 + (k / kTileK) * 512 + ((k % kTileK) / 2) * 32 +
         (n % 16) * 2 + k % 2;
}

// 16 fp32 results times the per-channel scale (int8 weights; the product rounded, as int8_linear
// and aten's int8 matmul round it), plus the bias, of output column c, short of the rounding to
// bf16 that the caller's store or SiLU·mul makes: each value rounded once a step (scale and bias
// as fp32, widened once a call by run_passes). The int8 gate_up's epilogue rounded its scaled
// product twice and widened the bf16 scale per 16 outputs: 30 of them at 2,000 rows 87 -> 81 ms
// (BENCHMARKS.md, session 71).
inline __m512 finish16(const float* out, const float* scale, const float* bias, int64_t c) {
  __m512 v = _mm512_loadu_ps(out);
  if (scale != nullptr) {
    v = _mm512_mul_ps(v, _mm512_loadu_ps(scale + c));
    if (bias != nullptr) v = round16<c10::BFloat16>(v);
  }
  return bias != nullptr ? _mm512_add_ps(v, _mm512_loadu_ps(bias + c)) : v;
}

// One row of a pass's `width` fp32 results (from packed column n0) into row `row` of y: a gated
// pair through SiLU·mul, bit for bit `silu_and_mul` of the stored linear.
inline void store_row(const float* out, int64_t width, int64_t n0, const Columns& columns,
                      const float* scale, const float* bias, c10::BFloat16* y, int64_t row) {
  using BF16 = c10::BFloat16;
  const int64_t N = columns.N;
  if (columns.silu_mul) {  // passes start at a gate block and hold whole pairs
    for (int64_t n = 0; n < width; n += 32) {
      const int64_t gate = columns.of(n0 + n), up = gate + N / 2;
      store16(y + row * (N / 2) + gate,
              silu_mul16<BF16>(round16<BF16>(finish16(out + n, scale, bias, gate)),
                               round16<BF16>(finish16(out + n + 16, scale, bias, up))));
    }
    return;
  }
  for (int64_t n = 0; n < width; n += 16) {
    const int64_t c = columns.of(n0 + n);
    store16(y + row * N + c, finish16(out + n, scale, bias, c));
  }
}

// y = (x [M, K] @ w.T) [* scale] [+ bias] over passes of `cols` outputs, w packed (bf16 or
// int8), its outputs where `columns` puts them; scale and bias may be null.
template <typename W>
void run_passes(const c10::BFloat16* xp, int64_t M, int64_t K, const Columns& columns,
                const W* wp, const c10::BFloat16* scale_bf16, const c10::BFloat16* bias_bf16,
                c10::BFloat16* y) {
  const int64_t N = columns.N;
  // The epilogue's scale and bias as fp32 (N of each, the threads read them).
  thread_local LineVector<float> widened_scale, widened_bias;
  const auto widen = [N](const c10::BFloat16* v, LineVector<float>& dst) -> const float* {
    if (v == nullptr) return nullptr;
    if (dst.size() < size_t(N)) dst.resize(N);
    for (int64_t n = 0; n < N; n += 16) _mm512_storeu_ps(dst.data() + n, load16(v + n));
    return dst.data();
  };
  const float* scale = widen(scale_bf16, widened_scale);
  const float* bias = widen(bias_bf16, widened_bias);
  const int64_t cols = M <= kTileRows ? 64 : 32;  // outputs per pass
  const int64_t passes = N / cols, tail_blocks = (N % cols) / 16;
  constexpr bool kInt8 = !std::is_same_v<W, c10::BFloat16>;
  const bool stream_x = M > kChunkRows;  // x outgrows L1: see pass_32
  // Passes [p0, p1) over rows [row0, row1) (row0 a multiple of kChunkRows).
  const auto run = [&](int64_t p0, int64_t p1, int64_t row0, int64_t row1) {
    const int64_t rows = row1 - row0;
    const int64_t blocks = std::max<int64_t>(1, (rows * K * 2 + kBlockBytes - 1) / kBlockBytes);
    const int64_t block_rows =
        ((rows + blocks - 1) / blocks + kChunkRows - 1) / kChunkRows * kChunkRows;
    int64_t configured = 0;  // the rows the tiles are configured for
    // Two chunks' results: a chunk's SiLU·mul epilogue (store_row) runs while the next chunk's
    // tiles multiply, between its steps (pass_32's `between`): 30 of SmolLM2's gate_up at 512
    // rows 34 ms against 37 for the plain linear alone and 45 with silu_and_mul after it.
    alignas(64) float out[2][kChunkRows * 64];
    int cur = 0;  // the buffer the next chunk's tiles are stored to
    struct Pending {
      int64_t rows = 0, done = 0, n0 = 0, r0 = 0, width = 0;  // rows = 0: none
      const float* out = nullptr;
    } pending;
    const auto finish = [&](int64_t upto) {
      for (; pending.done < std::min(upto, pending.rows); ++pending.done)
        store_row(pending.out + pending.done * cols, pending.width, pending.n0, columns, scale,
                  bias, y, pending.r0 + pending.done);
    };
    const auto finish_all = [&] {
      finish(pending.rows);
      pending.rows = 0;
    };
    const int64_t KB = K / kTileK;
    const auto between = [&](int64_t kb) {  // the pending rows spread over the steps
      if (pending.rows > 0) finish((kb + 1) * ((pending.rows + KB - 1) / KB));
    };
    // A group's passes' weights as bf16 (int8 weights of a call with more than one row chunk:
    // each pass's widened by its first chunk, into its own slot, which the group's other
    // blocks of rows read). Kept by the thread between calls: a fresh megabyte per call would
    // cost its page faults every time.
    const int64_t group = std::max<int64_t>(1, kGroupBytes / (cols * K * 2));
    const int64_t slot = 2 * (K / kTileK) * 512;  // one pass's bf16 tiles
    thread_local LineVector<c10::BFloat16> widened_group;  // tiles load its rows
    if (kInt8 && M > kChunkRows && widened_group.size() < size_t(group * slot))
      widened_group.resize(group * slot);
    for (int64_t g0 = p0; g0 < p1; g0 += group)
    for (int64_t b0 = row0; b0 < row1; b0 += block_rows)
      for (int64_t p = g0; p < std::min(p1, g0 + group); ++p) {
        const int64_t n0 = p * cols, b1 = std::min(row1, b0 + block_rows);
        const int64_t width = std::min<int64_t>(cols, N - n0);
        // Rows in chunks of 32: the pass's weights are read from memory (or a cache further
        // out) for a block's first chunk and from L1/L2 for the others.
        for (int64_t r0 = b0; r0 < b1; r0 += kChunkRows) {
          const int64_t m = std::min(kChunkRows, b1 - r0);
          const c10::BFloat16* xc = xp + r0 * K;
          float* o = out[cur];
          if (width == cols && m != configured) {
            configure_tiles(m);
            configured = m;
          }
          if (width == cols && M > kTileRows) {
            c10::BFloat16* widened =
                kInt8 && M > kChunkRows ? widened_group.data() + (p - g0) * slot : nullptr;
            if (!kInt8 || M <= kChunkRows)
              pass_32(xc, m, K, wp, n0 / 16, o, r0 == row0, nullptr, stream_x, between);
            else if (r0 == row0)
              pass_32(xc, m, K, wp, n0 / 16, o, true, widened, stream_x, between);
            else
              pass_32(xc, m, K, static_cast<const c10::BFloat16*>(widened), 0, o, false, nullptr,
                      stream_x, between);
            finish_all();  // what the steps left of the last chunk's
            pending = {m, 0, n0, r0, width, o};
            // Only SiLU·mul's epilogue is worth its overlap: a plain one (rounding and bias)
            // spread over the steps, in two buffers, made 512-row calls 2-10 % slower
            // (BENCHMARKS.md, session 66).
            if (columns.silu_mul) cur ^= 1;
            else finish_all();
            continue;
          }
          finish_all();
          if (width == cols) {
            pass_16(xc, K, wp, n0 / 16, o);
          } else {
            // The last columns (N not a multiple of the pass width) through the plain path,
            // rare (N % 64 != 0 with M <= 16, or N % 32 != 0).
            for (int64_t i = 0; i < m; ++i)
              for (int64_t n = n0; n < N; ++n) {
                float acc = 0.f;
                for (int64_t k = 0; k < K; ++k)
                  acc += static_cast<float>(xc[i * K + k]) *
                         static_cast<float>(wp[packed_index(n, k, K)]);
                o[i * cols + (n - n0)] = acc;
              }
          }
          for (int64_t i = 0; i < m; ++i)
            store_row(o + i * cols, width, n0, columns, scale, bias, y, r0 + i);
        }
      }
    finish_all();
    _tile_release();
  };
  const int64_t chunks = (M + kChunkRows - 1) / kChunkRows;
  // A share of rows in one piece: a piece reads all the weights (see parallel_for's pieces).
  const int64_t share = (chunks + at::get_num_threads() - 1) / at::get_num_threads();
  if (M >= kRowSplitRows)
    parallel_for(0, chunks, share, [&](int64_t c0, int64_t c1) {
      run(0, passes + (tail_blocks > 0), c0 * kChunkRows, std::min(M, c1 * kChunkRows));
    });
  else
    parallel_for(0, passes + (tail_blocks > 0), 1,
                 [&](int64_t p0, int64_t p1) { run(p0, p1, 0, M); });
}
#endif

}  // namespace

namespace {

// run_passes on x and the packed weights (bf16, or int8 with their scale) into y.
void run_linear(const at::Tensor& x, const at::Tensor& packed,
                const c10::optional<at::Tensor>& scale, const c10::optional<at::Tensor>& bias,
                const Columns& columns, at::Tensor& y) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  const int64_t M = x.size(0), K = x.size(1);
  const auto* xp = x.data_ptr<c10::BFloat16>();
  const auto* bp = bias.has_value() ? bias->data_ptr<c10::BFloat16>() : nullptr;
  auto* yp = y.data_ptr<c10::BFloat16>();
  if (packed.scalar_type() == at::kBFloat16) {
    run_passes(xp, M, K, columns, packed.data_ptr<c10::BFloat16>(), nullptr, bp, yp);
    return;
  }
#if defined(__AVX512BF16__)
  run_passes(xp, M, K, columns, packed.data_ptr<int8_t>(), scale->data_ptr<c10::BFloat16>(), bp,
             yp);
#endif
#endif
}

void check_scale(const at::Tensor& scale, int64_t N, const char* name) {
  TORCH_CHECK(scale.is_contiguous() && scale.numel() == N && scale.scalar_type() == at::kBFloat16,
              name, ": scale must be bf16 [N]");
  TORCH_CHECK(amx_int8_linear_available(), name, ": built without AVX512-BF16");
}

}  // namespace

at::Tensor amx_linear(at::Tensor x, at::Tensor packed, c10::optional<at::Tensor> bias,
                         c10::optional<at::Tensor> out) {
  check_amx_inputs(x, packed, at::kBFloat16, bias, "amx_linear");
  const int64_t N = packed.size(0) * 16;
  auto y = output_tensor(out, {x.size(0), N}, x.options(), x, "amx_linear");
  run_linear(x, packed, c10::nullopt, bias, Columns{N}, y);
  return y;
}

bool amx_int8_linear_available() {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BF16__)
  return amx_linear_available();
#else
  return false;
#endif
}

at::Tensor amx_int8_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                              c10::optional<at::Tensor> bias,
                              c10::optional<at::Tensor> out) {
  check_amx_inputs(x, packed, at::kChar, bias, "amx_int8_linear");
  const int64_t N = packed.size(0) * 16;
  check_scale(scale, N, "amx_int8_linear");
  auto y = output_tensor(out, {x.size(0), N}, x.options(), x, "amx_int8_linear");
  run_linear(x, packed, scale, bias, Columns{N}, y);
  return y;
}

at::Tensor amx_pack_gated(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.size(0) % 32 == 0,
              "amx_pack_gated: w must be [2I, K] with I a multiple of 16");
  const int64_t I = w.size(0) / 2, K = w.size(1);
  // Rows [gate block 0; up block 0; gate block 1; ...], then the tile layout.
  return amx_pack_weight(w.contiguous().view({2, I / 16, 16, K}).transpose(0, 1).reshape({2 * I, K}));
}

at::Tensor amx_gated_linear(at::Tensor x, at::Tensor packed, c10::optional<at::Tensor> scale,
                               c10::optional<at::Tensor> bias, bool silu_mul,
                               c10::optional<at::Tensor> out) {
  const bool int8 = packed.scalar_type() == at::kChar;
  check_amx_inputs(x, packed, int8 ? at::kChar : at::kBFloat16, bias, "amx_gated_linear");
  const int64_t N = packed.size(0) * 16;
  TORCH_CHECK(N % 32 == 0, "amx_gated_linear: packed must come from amx_pack_gated");
  TORCH_CHECK(int8 == scale.has_value(),
              "amx_gated_linear: int8 weights take a scale, bf16 weights none");
  if (int8) check_scale(*scale, N, "amx_gated_linear");
  auto y = output_tensor(out, {x.size(0), silu_mul ? N / 2 : N}, x.options(), x,
                         "amx_gated_linear");
  run_linear(x, packed, scale, bias, Columns{N, true, silu_mul}, y);
  return y;
}

}  // namespace roseinfer
