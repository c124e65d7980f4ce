// Decode attention over bf16 caches on AMX tiles (q . k and p . v from kAmxKeysFrom keys a task,
// head_dim 64 or 128), built on the AVX-512 kernels of `attention_avx512_pairs.h`; and
// `group_kernel`, which picks the vectorised kernel for a cache. Included by
// `paged_attention.cpp`.
#pragma once

#include <cstring>
#include <limits>

#include "amx.h"
#include "attention_avx512_pairs.h"

#if defined(__AVX512F__)
namespace roseinfer::attention {

#if defined(__AVX512BF16__) && defined(__AMX_TILE__) && defined(__AMX_BF16__)
// Keys from which a task runs on AMX: below, setting the tiles up costs more than they save (one
// sequence of 135 keys, SmolLM2's 30 layers, q . k 0.36 against 0.51 ms a step; p . v from 64
// keys 3-14 % slower at 70-250; from 500 keys on both win; BENCHMARKS.md, sessions 69 and 70).
constexpr int64_t kAmxKeysFrom = 256;

// 16 keys' products with the query heads into out [16][G] fp32 (row stride g4 bytes), with C
// tile CT and A tile AT (the keys, 32 dims a step); B tiles 6, 7, 4 and 5 hold the heads' pairs
// of dims 0-31, 32-63, 64-95 and 96-127. (The tile intrinsics take literal tile numbers: one
// function per set.)
#define ROSEINFER_KEY_PRODUCTS(NAME, CT, AT)                                                 \
  template <int NV>                                                                          \
  inline void NAME(const c10::BFloat16* key, int64_t D, float* out, int64_t g4) {            \
    _tile_zero(CT);                                                                          \
    _tile_loadd(AT, key, D * 2);                                                             \
    _tile_dpbf16ps(CT, AT, 6);                                                               \
    if constexpr (NV >= 2) {                                                                 \
      _tile_loadd(AT, key + 32, D * 2);                                                      \
      _tile_dpbf16ps(CT, AT, 7);                                                             \
    }                                                                                        \
    if constexpr (NV == 4) {                                                                 \
      _tile_loadd(AT, key + 64, D * 2);                                                      \
      _tile_dpbf16ps(CT, AT, 4);                                                             \
      _tile_loadd(AT, key + 96, D * 2);                                                      \
      _tile_dpbf16ps(CT, AT, 5);                                                             \
    }                                                                                        \
    amx::memory_barrier(); /* the last gather's loads of `out` first */                      \
    _tile_stored(CT, out, g4);                                                               \
  }
ROSEINFER_KEY_PRODUCTS(key_products_0, 0, 1)
ROSEINFER_KEY_PRODUCTS(key_products_1, 2, 3)
#undef ROSEINFER_KEY_PRODUCTS

// p . v on AMX tiles (head_dim 32 * NV, NV = 1, 2 or 4; even block sizes), from the scores on as
// attend_values_bf16: per 32 keys, the value rows paired by key as for_value_pairs pairs them
// (row r of B tile 2i + h holding keys 2r and 2r + 1 of the 16 dims in unpacklo (h = 0) or
// unpackhi's lanes), stored in turns into one of two buffers, times the heads' probabilities (A:
// [G][32 keys], read in place) into C [G][16] per B tile; the products run while the next 32
// keys' rows are paired (the vector products, a dpbf16 per head, pair and 32 dims, were over half
// of the kernel's time at long contexts; BENCHMARKS.md, session 70). Tiles: C 0..2NV-1, A 4,
// B 5 and 6 in turns; head_dim 128 in two passes of 64 dims (C tiles 0-3), the second reading
// the rows the first brought into cache.
template <int NV, int G>
void attend_values_bf16_amx(const KVView<c10::BFloat16>& kv, float* scores, const __m512* mxv,
                            c10::BFloat16* probs, float* acc, float* row_stats) {
  static_assert((NV == 1 || NV == 2 || NV == 4) && G <= amx::kTileRows, "C tiles 0-3");
  using T = c10::BFloat16;
  constexpr int64_t D = 32 * NV, kKeys = 2 * amx::kTileRows;  // keys per step
  constexpr int NH = NV == 4 ? 2 : NV;  // 32-dim parts a pass pairs
  constexpr int NB = 2 * NH;            // B (and C) tiles per step
  float inv_sum[G];
  bf16_probabilities<NV, G>(kv, scores, mxv, probs, inv_sum, row_stats);
  amx::TileConfig cfg;
  for (int t = 0; t < NB; ++t) cfg.rows[t] = G;
  cfg.rows[4] = G;
  cfg.rows[5] = cfg.rows[6] = amx::kTileRows;
  // Columns only for the tiles in use: ldtilecfg faults on a tile of 0 rows and some columns
  // (tiles 2 and 3 at head_dim 32).
  for (int t = 0; t < 7; ++t)
    if (cfg.rows[t] != 0) cfg.colsb[t] = amx::kTileBytes;
  amx::memory_barrier();
  _tile_loadconfig(&cfg);
  const int64_t len = kv.len, stride = len + 1, block_size = kv.block_size;
  using Pairs = uint16_t[NB][amx::kTileRows][32];  // a step's B tiles
  alignas(64) Pairs pairs[2];
  alignas(64) uint16_t tail[G][kKeys];  // the last step's probabilities, zeros past len
  alignas(64) float c[NB][G][16];
  for (int64_t d0 = 0; d0 < D; d0 += 32 * NH) {  // a pass over the keys per 64 dims
    int64_t b = 0, j = 0;                         // the block and row of the step's next key
    const T* value = kv.v_block(0) + d0;
    prefetch_v_block(kv, kValueBlocksAhead<T>, D * int64_t(sizeof(T)));
    const auto pair_rows = [&](int64_t t0, Pairs& bt) {  // keys t0.. into bt
      for (int r = 0; r < amx::kTileRows; ++r) {
        const int64_t t = t0 + 2 * r;
        if (t >= len) {  // zeros, not an earlier step's rows: 0 * inf would be NaN
          for (int i = 0; i < NB; ++i) _mm512_store_si512(bt[i][r], _mm512_setzero_si512());
          continue;
        }
        if (j == block_size) {
          ++b;
          j = 0;
          value = kv.v_block(b) + d0;
          prefetch_v_block(kv, b + kValueBlocksAhead<T>, D * int64_t(sizeof(T)));
        }
        const bool pair = t + 1 < len;
        for (int i = 0; i < NH; ++i) {
          const __m512i r0 = _mm512_loadu_si512(value + j * D + 32 * i);
          const __m512i r1 =
              pair ? _mm512_loadu_si512(value + (j + 1) * D + 32 * i) : _mm512_setzero_si512();
          _mm512_store_si512(bt[2 * i][r], _mm512_unpacklo_epi16(r0, r1));
          _mm512_store_si512(bt[2 * i + 1][r], _mm512_unpackhi_epi16(r0, r1));
        }
        j += 2;
      }
    };
    const auto multiply = [&](int64_t t0, const Pairs& bt) {  // C += p[:, t0..] . bt
      const void* a = probs + t0;
      int64_t a_stride = stride * int64_t(sizeof(T));
      if (t0 + kKeys > len) {
        const __mmask32 valid = static_cast<__mmask32>((uint64_t(1) << (len - t0)) - 1);
        for (int g = 0; g < G; ++g)
          _mm512_store_si512(tail[g], _mm512_maskz_loadu_epi16(valid, probs + g * stride + t0));
        a = tail;
        a_stride = kKeys * int64_t(sizeof(uint16_t));
      }
      amx::memory_barrier();  // the tile loads read the stores before them
      _tile_loadd(4, a, a_stride);
      _tile_loadd(5, bt[0], amx::kTileBytes);
      _tile_dpbf16ps(0, 4, 5);
      _tile_loadd(6, bt[1], amx::kTileBytes);
      _tile_dpbf16ps(1, 4, 6);
      if constexpr (NH == 2) {
        _tile_loadd(5, bt[2], amx::kTileBytes);
        _tile_dpbf16ps(2, 4, 5);
        _tile_loadd(6, bt[3], amx::kTileBytes);
        _tile_dpbf16ps(3, 4, 6);
      }
      amx::memory_barrier();  // the next stores to bt come after these loads
    };
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (NH == 2) {
      _tile_zero(2);
      _tile_zero(3);
    }
    // A step's rows are paired a step ahead of their products: a tile load right after the
    // stores it reads waits for them to drain.
    const int64_t steps = (len + kKeys - 1) / kKeys;
    pair_rows(0, pairs[0]);
    for (int64_t k = 0; k < steps; ++k) {
      if (k + 1 < steps) pair_rows((k + 1) * kKeys, pairs[(k + 1) % 2]);
      multiply(k * kKeys, pairs[k % 2]);
    }
    _tile_stored(0, c[0], amx::kTileBytes);
    _tile_stored(1, c[1], amx::kTileBytes);
    if constexpr (NH == 2) {
      _tile_stored(2, c[2], amx::kTileBytes);
      _tile_stored(3, c[3], amx::kTileBytes);
    }
    amx::memory_barrier();  // the loads below read the tile stores
    for (int g = 0; g < G; ++g)
      for (int i = 0; i < NH; ++i)
        store_pair_sums(_mm512_load_ps(c[2 * i][g]), _mm512_load_ps(c[2 * i + 1][g]),
                        _mm512_set1_ps(inv_sum[g]), acc + g * D + d0 + 32 * i);
  }
  _tile_release();
}

// q . k on AMX tiles (blocks of a multiple of 16 rows, head_dim 32, 64 or 128), into scores and
// mxv as score_keys_bf16: 16 keys' rows read in place from the block (A, 16 x 32 dims a tile) times the
// query heads as pairs (B, [16 pairs][G], made once), into C [16 keys][G], which a gather per
// head turns back into each head's 16 scores. Two sets of C and A tiles take turns, so one
// group's products run while the last group's scores are gathered (the vector products and their
// horizontal sums were about half of the vector kernel's own work; BENCHMARKS.md, session 69).
// Tiles: C and A 0, 1 and 2, 3; B 6, 7, 4, 5 (one per 32 dims).
template <int NV, int G>
void score_keys_bf16_amx(const float* q, const KVView<c10::BFloat16>& kv, float scale,
                         float* scores, __m512* mxv) {
  static_assert(G <= 16 && (NV == 1 || NV == 2 || NV == 4), "B tiles 6, 7, 4, 5: head_dim <= 128");
  using T = c10::BFloat16;
  constexpr int64_t D = 32 * NV, g4 = G * 4;
  constexpr int kBTile[4] = {6, 7, 4, 5};  // the B tile of dims 32i..
  amx::TileConfig cfg;
  for (int t : {0, 1, 2, 3}) cfg.rows[t] = amx::kTileRows;
  cfg.colsb[0] = cfg.colsb[2] = g4;
  cfg.colsb[1] = cfg.colsb[3] = amx::kTileBytes;
  for (int i = 0; i < NV; ++i) {
    cfg.rows[kBTile[i]] = amx::kTileRows;
    cfg.colsb[kBTile[i]] = g4;
  }
  amx::memory_barrier();
  _tile_loadconfig(&cfg);
  // B_i [r][g] = head g's dims 32i + 2r, 32i + 2r + 1 as a bf16 pair (q came from bf16: exact).
  alignas(64) uint16_t pairs[NV][amx::kTileRows][G][2];
  for (int i = 0; i < NV; ++i)
    for (int r = 0; r < amx::kTileRows; ++r)
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < 2; ++j)
          pairs[i][r][g][j] = c10::BFloat16(q[g * D + 32 * i + 2 * r + j]).x;
  amx::memory_barrier();
  _tile_loadd(6, pairs[0], g4);
  if constexpr (NV >= 2) _tile_loadd(7, pairs[1], g4);
  if constexpr (NV == 4) {
    _tile_loadd(4, pairs[2], g4);
    _tile_loadd(5, pairs[3], g4);
  }
  alignas(64) float c[2][amx::kTileRows * G];
  const __m512i heads = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(G));
  const __m512 scalev = _mm512_set1_ps(scale);
  for (int g = 0; g < G; ++g) mxv[g] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t len = kv.len, block_size = kv.block_size;
  int64_t last_at = -1, last_m = 0;  // the group whose products wait to be gathered
  const auto gather = [&](int buf) {
    amx::memory_barrier();  // the tile store wrote c[buf]
    const __mmask16 valid = static_cast<__mmask16>((1u << last_m) - 1);
    for (int g = 0; g < G; ++g) {
      const __m512 sc = _mm512_mul_ps(
          _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid, heads, c[buf] + g, 4), scalev);
      _mm512_mask_storeu_ps(scores + g * len + last_at, valid, sc);
      mxv[g] = _mm512_mask_max_ps(mxv[g], valid, mxv[g], sc);
    }
  };
  int k = 0;  // groups issued
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_k_block(kv, b + kPrefetchBlocks, D * int64_t(sizeof(T)));
    const T* block = kv.k_block(b);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t r = 0; r < n; r += amx::kTileRows, ++k) {
      if (k % 2 == 0) key_products_0<NV>(block + r * D, D, c[0], g4);
      else key_products_1<NV>(block + r * D, D, c[1], g4);
      if (last_at >= 0) gather(1 - k % 2);
      last_at = start + r;
      last_m = std::min<int64_t>(amx::kTileRows, n - r);
    }
  }
  if (last_at >= 0) gather((k - 1) % 2);
}

// The bf16 kernel where the process may use AMX: from kAmxKeysFrom keys, p . v on its tiles (even
// block sizes) and q . k too (blocks of a multiple of 16 rows); else attend_group_bf16.
template <int NV, int G>
void attend_group_bf16_amx(const float* q, const KVView<c10::BFloat16>& kv, float scale,
                           float* scores, c10::BFloat16* probs, float* acc, float* row_stats) {
  if (kv.block_size % 2 != 0 || kv.len < kAmxKeysFrom) {
    attend_group_bf16<NV, G>(q, kv, scale, scores, probs, acc, row_stats);
    return;
  }
  __m512 mxv[G];
  if (kv.block_size % amx::kTileRows == 0)
    score_keys_bf16_amx<NV, G>(q, kv, scale, scores, mxv);
  else
    score_keys_bf16<NV, G>(q, kv, scale, scores, mxv);
  attend_values_bf16_amx<NV, G>(kv, scores, mxv, probs, acc, row_stats);
}
#endif

#if defined(__AVX512BF16__)
// Up to 12 * 2 accumulators: the V pass keeps them all in the 32 vector registers. Where the CPU
// runs AMX (and the process may use it), q . k and p . v on its tiles from kAmxKeysFrom keys.
template <int NV, int G>
GroupFn<c10::BFloat16> bf16_group_kernel() {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  if (amx::request()) return attend_group_bf16_amx<NV, G>;
#endif
  return attend_group_bf16<NV, G>;
}

template <int NV>
GroupFn<c10::BFloat16> bf16_group_kernel_for(int64_t group) {
  switch (group) {
    case 1: return bf16_group_kernel<NV, 1>();
    case 2: return bf16_group_kernel<NV, 2>();
    case 3: return bf16_group_kernel<NV, 3>();
    case 4: return bf16_group_kernel<NV, 4>();
    case 5: return NV <= 2 ? bf16_group_kernel<NV, 5>() : nullptr;
    case 6: return NV <= 2 ? bf16_group_kernel<NV, 6>() : nullptr;
    default: return nullptr;
  }
}
#endif

// The vectorised kernel for a cache of type C, or nullptr where there is none.
template <typename C>
GroupFn<C> group_kernel(int64_t head_dim, int64_t group) {
  if constexpr (std::is_same_v<C, int8_t>) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    if (head_dim == 64) return int8_group_kernel_for<1>(group);
    if (head_dim == 128) return int8_group_kernel_for<2>(group);
#endif
    return nullptr;
  } else {
#if defined(__AVX512BF16__)
    if constexpr (std::is_same_v<C, c10::BFloat16>) {
      GroupFn<C> fn = nullptr;
      if (head_dim == 64) fn = bf16_group_kernel_for<2>(group);
      if (head_dim == 128) fn = bf16_group_kernel_for<4>(group);
      if (fn != nullptr) return fn;
    }
#endif
    if (head_dim == 64) return group_kernel_for<C, 4>(group);
    if (head_dim == 128) return group_kernel_for<C, 8>(group);
    return nullptr;
  }
}

}  // namespace roseinfer::attention
#endif
