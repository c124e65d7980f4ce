// The prefill kernel's tile for bf16 queries on CPUs with AMX (prefill_attention.cpp takes it
// there, for bf16 and int8 caches, head_dim a multiple of 32, blocks of a multiple of 16 rows):
// both products on AMX tiles, 16 x 16 x 32 per instruction. The same order and the same
// transposed layouts as the bf16-pairs tile (prefill_dpbf16.h), whose softmax and pairing it
// shares:
//
// - scores, transposed ([keys][RP], as the softmax reads them): 16 keys' rows (A) read in place
//   from the cache block (a bf16 cache; an int8 cache's codes converted per key tile) times the
//   task's queries as pairs (B, [D/2][RP], transposed once per task);
// - outputs, transposed ([D][RP]): the values paired by key and transposed once per key tile
//   (A, [D][keys/2]) times the weights as pairs (B, [keys/2][RP], the pairs tile's P).
//
// Written against `Tiles` (amx.h): `AmxTiles` runs it, `EmulatedTiles` checks its layouts on
// CPUs without AMX (`paged_prefill_attention(..., tile="amx_emulated")`).
#pragma once

#include <cstdint>
#include <type_traits>

#include "amx.h"
#include "prefill_dpbf16.h"

namespace roseinfer::prefill {

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
constexpr bool kAmxTileBuilt = true;

// C_i (+)= sum over s < steps of A_i,s . B_s for NA row blocks of A (16 rows each) and NB
// column blocks of B (16 columns each): A_i,s is 16 rows of 32 bf16 at a[i] + s * 64 bytes (row
// stride lda bytes); B_s is 16 pair rows of columns b + 16 j at b + s * b_step (row stride ldb
// pairs); C_ij is 16 x 16 fp32 at c[i] + 16 j (row stride ldc floats), loaded first where
// `accumulate`. Tiles: C 0-3, A 4-5, B 6-7.
template <class Tiles, int NA, int NB>
void tile_products(const char* const* a, int64_t lda, const uint32_t* b, int64_t ldb,
                   int64_t b_step, int64_t steps, float* const* c, int64_t ldc, bool accumulate) {
  static_assert(NA >= 1 && NA <= 2 && NB >= 1 && NB <= 2);
  const int64_t ldc_bytes = ldc * 4, ldb_bytes = ldb * 4;
  if (accumulate) {
    Tiles::template load<0>(c[0], ldc_bytes);
    if constexpr (NB == 2) Tiles::template load<1>(c[0] + 16, ldc_bytes);
    if constexpr (NA == 2) Tiles::template load<2>(c[1], ldc_bytes);
    if constexpr (NA == 2 && NB == 2) Tiles::template load<3>(c[1] + 16, ldc_bytes);
  } else {
    Tiles::template zero<0>();
    if constexpr (NB == 2) Tiles::template zero<1>();
    if constexpr (NA == 2) Tiles::template zero<2>();
    if constexpr (NA == 2 && NB == 2) Tiles::template zero<3>();
  }
  for (int64_t s = 0; s < steps; ++s) {
    Tiles::template load<4>(a[0] + s * amx::kTileBytes, lda);
    if constexpr (NA == 2) Tiles::template load<5>(a[1] + s * amx::kTileBytes, lda);
    Tiles::template load<6>(b + s * b_step, ldb_bytes);
    if constexpr (NB == 2) Tiles::template load<7>(b + s * b_step + 16, ldb_bytes);
    Tiles::template dot<0, 4, 6>();
    if constexpr (NB == 2) Tiles::template dot<1, 4, 7>();
    if constexpr (NA == 2) Tiles::template dot<2, 5, 6>();
    if constexpr (NA == 2 && NB == 2) Tiles::template dot<3, 5, 7>();
  }
  Tiles::template store<0>(c[0], ldc_bytes);
  if constexpr (NB == 2) Tiles::template store<1>(c[0] + 16, ldc_bytes);
  if constexpr (NA == 2) Tiles::template store<2>(c[1], ldc_bytes);
  if constexpr (NA == 2 && NB == 2) Tiles::template store<3>(c[1] + 16, ldc_bytes);
}

// tile_products over `rows` rows of A (a multiple of 16; row block i at a(i)) and RP columns of
// B (a multiple of 32): blocks of 32 x 32 outputs, then one 16-row block if `rows` leaves it.
template <class Tiles, typename ARow, typename CRow>
void tile_product_blocks(int64_t rows, ARow a, int64_t lda, const uint32_t* b, int64_t ldb,
                         int64_t b_step, int64_t steps, CRow c, int64_t ldc, int64_t RP,
                         bool accumulate) {
  for (int64_t col = 0; col < RP; col += 32) {
    int64_t i = 0;
    for (; i + 2 <= rows / 16; i += 2) {
      const char* ai[2] = {a(i), a(i + 1)};
      float* ci[2] = {c(i) + col, c(i + 1) + col};
      tile_products<Tiles, 2, 2>(ai, lda, b + col, ldb, b_step, steps, ci, ldc, accumulate);
    }
    if (i < rows / 16) {
      const char* ai[1] = {a(i)};
      float* ci[1] = {c(i) + col};
      tile_products<Tiles, 1, 2>(ai, lda, b + col, ldb, b_step, steps, ci, ldc, accumulate);
    }
  }
}

// dst[d][k] = src[k][d] for k < rows, d < cols (both multiples of 16; row strides: src cols,
// dst dst_cols), 16 x 16 blocks of 32-bit elements through registers.
inline void transpose_pairs(const uint32_t* src, int64_t rows, int64_t cols, uint32_t* dst,
                            int64_t dst_cols) {
  for (int64_t k0 = 0; k0 < rows; k0 += 16)
    for (int64_t d0 = 0; d0 < cols; d0 += 16) {
      __m512i r[16];
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(src + (k0 + i) * cols + d0);
      transpose16(r);
      for (int j = 0; j < 16; ++j) _mm512_storeu_si512(dst + (d0 + j) * dst_cols + k0, r[j]);
    }
}

// dst.value_tiles' tile = the tile's n values as dst.value_pairs holds them, paired and
// transposed ([D][kKeyTile / 2]), 0 past its pairs. pairs: room for a tile's pairs.
inline void make_value_tile(const PairedKV& dst, int64_t n, int64_t D,
                            LineVector<uint32_t>& pairs) {
  const int64_t np = (n + 1) / 2;
  pairs.assign(kKeyTile / 2 * D, 0u);
  std::copy(dst.value_pairs, dst.value_pairs + np * D, pairs.begin());
  transpose_pairs(pairs.data(), kKeyTile / 2, D, dst.value_tiles, kKeyTile / 2);
}

// As attend_tile_pairs for D % 32 == 0 and BS % 16 == 0 (a 16-key group lies in one block),
// its products on `Tiles`, the task's rows 32 at a time: each 32-row block runs its own online
// softmax over the key tiles its rows see, so that its scores ([keys][32]) and outputs
// ([D][32]), 8 KB each for D = 64, stay in L1: a tile's store to a line outside L1 costs about
// what two products do (a probe's), and the whole task's rows at once (192) kept 48 KB of each
// (SmolLM2's 30 layers, a 512-token chunk after 1,488 cached tokens 7-8 % faster in row blocks;
// BENCHMARKS.md, session 67). What the blocks share is made once per task: the queries as pairs,
// each key tile's values paired and transposed (and an int8 cache's codes and scales).
// `paired`: the group's values paired by key and in tiles (and an int8 cache's keys as codes,
// both scales) made once for all its tasks, or empty: the task pairs its own.
template <class Tiles, typename C>
[[gnu::noinline]] void attend_tile_amx(const c10::BFloat16* q, c10::BFloat16* out,
                                       const attention::KVView<C>& kv, const PairedKV& paired,
                                       int64_t q_row0, int64_t count, int64_t pos0, int64_t kvh,
                                       const Layout& L, Scratch& w) {
  static_assert(std::is_same_v<C, c10::BFloat16> || std::is_same_v<C, int8_t>);
  constexpr bool int8_cache = std::is_same_v<C, int8_t>;
  constexpr int64_t kBlockRows = 32;  // a row block: one pair of 16-column B tiles
  const int64_t G = L.H / L.KVH, D = L.D, BS = L.BS, rows = count * G;
  const int64_t RP = (rows + kBlockRows - 1) / kBlockRows * kBlockRows;
  const int64_t KT = kKeyTile % BS == 0 ? kKeyTile : BS;
  const int64_t KA = (KT + 31) / 32 * 32;  // keys per tile, in whole 32-key steps of the values
  const int64_t last = pos0 + count - 1;  // the task's last query sees keys 0..last
  const int64_t tiles = last / KT + 1;
  const bool shared = paired.value_pairs != nullptr;
  const bool shared_tiles = paired.value_tiles != nullptr;  // (then KT is kKeyTile)
  pair_queries(q, q_row0, count, kvh, L, RP, w);
  // Per key tile, shared by the row blocks: its values paired by key and transposed ([D][KA/2],
  // tile k at k * D * KA / 2, 0 past its keys up to whole 32-key steps); an int8 cache's key
  // codes and both scales (key t at t), the scores' factors (key t at t).
  if (!shared_tiles) {
    w.vt.resize(KA / 2 * D);
    w.vtt.resize(tiles * D * KA / 2);
    w.vrow_bf16.resize(KA);
  }
  w.score_scale.resize(tiles * KA);
  if constexpr (int8_cache) {
    if (!shared) {
      w.kb.resize(tiles * KA * D);
      w.vb.resize(KA * D);
      w.ks.assign(tiles * KA, 0.f);
      w.vs.resize(tiles * KA);
    }
  }
  // The keys the group's pairs were written for: a sequence's odd last key's pair ends in 0.
  const int64_t written = (kv.len + 1) / 2 * 2;
  for (int64_t k = 0; k < tiles; ++k) {
    const int64_t t0 = k * KT, n = std::min(KT, last + 1 - t0);
    const int64_t np = (n + 1) / 2, padded = 16 * ((n + 31) / 32);
    const PairedKV here = shared ? paired.at(t0, D) : PairedKV{};
    if constexpr (int8_cache)
      if (!shared)
        int8_rows(kv, t0, n, D, w.kb.data() + t0 * D, w.ks.data() + t0, w.vb.data(),
                  w.vs.data() + t0);
    const float* key_scale = shared ? here.key_scale : w.ks.data() + t0;
    for (int64_t j = 0; j < n; ++j)
      w.score_scale[t0 + j] = int8_cache ? L.scale * kLog2e * key_scale[j] : L.scale * kLog2e;
    if (shared_tiles) continue;
    const uint32_t* vt = w.vt.data();  // [padded][D]: the tile's value pairs, 0 past np
    if (shared && t0 + 2 * padded <= written) {
      // Whole pairs of the sequence's own keys up to `padded` (past np they meet zero weights)
      vt = here.value_pairs;
    } else if (shared) {
      std::copy(here.value_pairs, here.value_pairs + np * D, w.vt.begin());
      std::fill(w.vt.begin() + np * D, w.vt.begin() + padded * D, 0u);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t t = t0 + j;
        if constexpr (int8_cache) w.vrow_bf16[j] = w.vb.data() + j * D;
        else w.vrow_bf16[j] = kv.v_block(t / BS) + (t % BS) * D;
      }
      pair_values_by_key(w.vrow_bf16.data(), n, D, w.vt.data());
      std::fill(w.vt.begin() + np * D, w.vt.begin() + padded * D, 0u);
    }
    transpose_pairs(vt, padded, D, w.vtt.data() + k * D * KA / 2, KA / 2);
  }
  w.pp.resize(KA / 2 * kBlockRows);
  for (int64_t first = 0; first < rows; first += kBlockRows) {
    w.start(rows, kBlockRows, D, KA, G, pos0, first);
    const int64_t first_pos = pos0 + first / G;
    const int64_t block_last = pos0 + (std::min(rows, first + kBlockRows) - 1) / G;
    for (int64_t t0 = 0; t0 <= block_last; t0 += KT) {
      const int64_t k = t0 / KT, n = std::min(KT, block_last + 1 - t0);
      const PairedKV here = shared ? paired.at(t0, D) : PairedKV{};
      // Scores of the keys in groups of 16 (the last group's keys past n read what the block,
      // or the codes' room rounded to 16 keys, holds there; their scores are never read).
      const auto key_rows = [&](int64_t i) {
        const int64_t t = t0 + 16 * i;
        if constexpr (int8_cache)
          return reinterpret_cast<const char*>(
              (shared ? here.key_codes : w.kb.data() + t0 * D) + 16 * i * D);
        else return reinterpret_cast<const char*>(kv.k_block(t / BS) + (t % BS) * D);
      };
      const auto score_rows = [&](int64_t i) { return w.st.data() + 16 * i * kBlockRows; };
      tile_product_blocks<Tiles>((n + 15) / 16 * 16, key_rows, D * 2, w.qp.data() + first, RP,
                                 16 * RP, D / 32, score_rows, kBlockRows, kBlockRows, false);
      // The scores in base 2, as softmax_pairs takes them: the products times each key's
      // factor, applied as the softmax reads them (a pass of its own over the tile's scores
      // cost ~6 % of the tile: BENCHMARKS.md, session 65). Weights as pairs of keys, zero
      // past the tile's n keys up to whole 32-key steps.
      const float* value_scale = shared ? here.value_scale : w.vs.data() + t0;
      softmax_pairs_rows(w, kBlockRows, D, n, t0, t0 + n - 1 > first_pos,
                         int8_cache ? value_scale : nullptr, w.pp.data(),
                         w.score_scale.data() + t0);
      const int64_t np = (n + 1) / 2, steps = (n + 31) / 32;
      std::fill(w.pp.begin() + np * kBlockRows, w.pp.begin() + 16 * steps * kBlockRows, 0u);
      const uint32_t* vtt = (shared_tiles ? paired.value_tiles : w.vtt.data()) + k * D * KA / 2;
      const auto value_rows = [&](int64_t i) {
        return reinterpret_cast<const char*>(vtt + 16 * i * (KA / 2));
      };
      const auto output_rows = [&](int64_t i) { return w.ot.data() + 16 * i * kBlockRows; };
      tile_product_blocks<Tiles>(D, value_rows, KA * 2, w.pp.data(), kBlockRows,
                                 16 * kBlockRows, steps, output_rows, kBlockRows, kBlockRows,
                                 true);
    }
    write_outputs_bf16(w, kBlockRows, out, q_row0, count, kvh, L, first);
  }
}
#else
constexpr bool kAmxTileBuilt = false;
#endif

}  // namespace roseinfer::prefill
