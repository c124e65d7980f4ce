// The prefill kernel's tile for bf16 queries on CPUs with AVX512-BF16 (prefill_attention.cpp
// takes it there, for bf16 and int8 caches): both products by vdpbf16ps, which multiplies 32
// bf16 pairs per instruction, twice an fp32 FMA's 16. The rows stay along the lanes, as in the
// fp32 tile; what the instruction sums are pairs:
//
// - scores: a lane holds a row's queries d, d + 1 (the task's queries transposed once, as
//   pairs: [D/2][RP]), times one key's pair d, d + 1 broadcast from its row in place (a 32-bit
//   load: bf16 caches are read as they lie);
// - outputs: a lane holds a row's weights of keys j, j + 1 ([keys/2][RP], the softmax's fp32
//   weights rounded to bf16, as flash attention's P), times the values of those keys at dim d,
//   paired once per key tile ([keys/2][D]) and broadcast.
//
// An int8 cache's codes are exact in bf16: its rows are converted per key tile, and their
// scales multiply the scores and the weights in fp32, so they add no rounding of their own.
//
// The softmax, its max and sum, and the outputs' sums stay fp32 (prefill_attention.h).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "prefill_attention.h"

namespace roseinfer::prefill {

// Keys and values of one (sequence, KV head) as the pairs tile multiplies them, from some key t
// on (t even): its values paired by key ([pairs][D]); for an int8 cache its keys as bf16 codes
// ([keys][D]) and both scales ([keys]), else null (a bf16 cache's keys are read in place).
// For the AMX tile also the values of each kKeyTile keys from t on paired and transposed
// ([D][kKeyTile / 2], 0 past the sequence's keys), or null where it transposes its own.
struct PairedKV {
  uint32_t* value_pairs = nullptr;
  c10::BFloat16* key_codes = nullptr;
  float* key_scale = nullptr;
  float* value_scale = nullptr;
  uint32_t* value_tiles = nullptr;

  // The same from key t + u on (u even; a multiple of kKeyTile where value_tiles is set).
  PairedKV at(int64_t u, int64_t D) const {
    return {value_pairs + u / 2 * D, key_codes == nullptr ? nullptr : key_codes + u * D,
            key_scale == nullptr ? nullptr : key_scale + u,
            value_scale == nullptr ? nullptr : value_scale + u,
            value_tiles == nullptr ? nullptr : value_tiles + u / kKeyTile * D * (kKeyTile / 2)};
  }
};

// A call's (sequence, KV head) groups as PairedKV from key 0, made once before the tasks for the
// groups of more than one task (each task reads every key again); a group of one task pairs its
// own key tiles (`of` gives it no pairs). Group g's keys from first[g] (even), room for its
// length rounded up to 16. The pairs and codes are unset until written (no tile reads a key
// past its sequence's length); the scales past it are 0. With `tiles` (the AMX tile's, kKeyTile
// keys a tile) also each group's value tiles from first_tile[g].
struct PairedRows {
  std::vector<int64_t> first, first_tile;
  LineArray<uint32_t> value_pairs, value_tiles;
  LineArray<c10::BFloat16> key_codes;  // int8 caches only
  std::vector<float> key_scale, value_scale;

  // lens[g]: group g's keys, 0 where it pairs its own.
  void allocate(const std::vector<int64_t>& lens, int64_t D, bool int8_cache, bool tiles) {
    first.assign(1, 0);
    first_tile.assign(1, 0);
    for (int64_t len : lens) {
      first.push_back(first.back() + (len + 15) / 16 * 16);
      first_tile.push_back(first_tile.back() + (len + kKeyTile - 1) / kKeyTile);
    }
    const int64_t keys = first.back();
    value_pairs = line_array<uint32_t>(keys / 2 * D);
    if (tiles) value_tiles = line_array<uint32_t>(first_tile.back() * D * (kKeyTile / 2));
    if (int8_cache) {
      key_codes = line_array<c10::BFloat16>(keys * D);
      key_scale.assign(keys, 0.f);
      value_scale.assign(keys, 0.f);
    }
  }
  PairedKV of(int64_t g, int64_t D) {
    if (first.empty() || first[g + 1] == first[g]) return {};
    const PairedKV all{value_pairs.get(), key_codes.get(),
                       key_codes == nullptr ? nullptr : key_scale.data(),
                       key_codes == nullptr ? nullptr : value_scale.data()};
    PairedKV group = all.at(first[g], D);
    if (value_tiles != nullptr)
      group.value_tiles = value_tiles.get() + first_tile[g] * D * (kKeyTile / 2);
    return group;
  }
};

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
constexpr bool kPairsTile = true;

// st[j][c + r] = scale * key_scale[j] * sum over pairs p of qp[p][c + r] . key[j][p] for NB
// keys (key_scale null: 1) and kRowVecs vectors of rows from c: each load of the queries shared
// by the NB keys. pairs >= 1.
template <int NB>
[[gnu::noinline]] void pair_scores(const uint32_t* __restrict qp, int64_t RP, const uint32_t* const* key,
                        const float* key_scale, int64_t pairs, float scale, float* __restrict st,
                        int64_t c) {
  assume(pairs >= 1);
  __m512 acc[NB][kRowVecs];
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < kRowVecs; ++r) acc[j][r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh x[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r)
      x[r] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(qp + p * RP + c + r * kLanes));
    for (int j = 0; j < NB; ++j) {
      const __m512bh e = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(key[j][p])));
      for (int r = 0; r < kRowVecs; ++r) acc[j][r] = _mm512_dpbf16_ps(acc[j][r], x[r], e);
    }
  }
  for (int j = 0; j < NB; ++j) {
    const __m512 s = _mm512_set1_ps(key_scale == nullptr ? scale : scale * key_scale[j]);
    for (int r = 0; r < kRowVecs; ++r)
      _mm512_storeu_ps(st + j * RP + c + r * kLanes, _mm512_mul_ps(acc[j][r], s));
  }
}

// ot[d0 + i][c + r] += sum over key pairs k < np of pp[k][c + r] . vt[k][d0 + i] for DB dims:
// each load of the weights shared by the DB dims. np >= 1.
template <int DB>
[[gnu::noinline]] void pair_values(const uint32_t* __restrict pp, int64_t RP, const uint32_t* __restrict vt,
                        int64_t D, int64_t np, float* __restrict ot, int64_t c, int64_t d0) {
  assume(np >= 1);
  __m512 acc[DB][kRowVecs];
  for (int i = 0; i < DB; ++i)
    for (int r = 0; r < kRowVecs; ++r) acc[i][r] = _mm512_loadu_ps(ot + (d0 + i) * RP + c + r * kLanes);
  for (int64_t k = 0; k < np; ++k) {
    __m512bh p[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r)
      p[r] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(pp + k * RP + c + r * kLanes));
    for (int i = 0; i < DB; ++i) {
      const __m512bh e = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(vt[k * D + d0 + i])));
      for (int r = 0; r < kRowVecs; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], p[r], e);
    }
  }
  for (int i = 0; i < DB; ++i)
    for (int r = 0; r < kRowVecs; ++r) _mm512_storeu_ps(ot + (d0 + i) * RP + c + r * kLanes, acc[i][r]);
}

// The pairs tile's scores are in base 2 (times log2(e), folded into the scale): a weight is
// 2^x for x = score - running max (<= kRescaleSlack), as 2^floor(x) * 2^f, f = x - floor(x) in
// [0, 1) (one vreduceps; vscalefps takes the floor of x itself: an instruction less than the
// nearest integer's vrndscaleps and a subtraction, session 70), 2^f by a degree-3 polynomial
// fitted for least relative error (< 8e-5, a 25th of the bf16 rounding every weight then
// takes; degree 4's 3e-6 cost 3-4 % more of the AMX tile: BENCHMARKS.md, session 68). No
// clamps: an x under -126 gives a subnormal or 0, which the weight's bf16 (vcvtne2ps2bf16
// flushes subnormals) and the row's sum (at least 1) make nothing of; a masked key's x is set to
// kMasked first. Against exp16's clamps, multiply and degree 6: 6-7.5 % off the kernel (session
// 40).
constexpr float kExp2Poly3[4] = {7.802452e-2f, 2.2606719e-1f, 6.958335e-1f, 9.999252e-1f};
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;

inline __m512 softmax_exp2(__m512 x) {
  const __m512 f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p = _mm512_set1_ps(kExp2Poly3[0]);
  for (int i = 1; i < 4; ++i) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly3[i]));
  return _mm512_scalef_ps(p, x);
}

// A key past a row's position (causal): its x, whose 2^x is exactly 0.
constexpr float kMasked = -1e4f;

// As softmax_rows (prefill_attention.h) for kLanes rows from c and scores in base 2
// (softmax_exp2), the weights then going straight into pp as bf16 pairs instead of back into st:
// pp[k][r] = (weight of key 2k, weight of key 2k + 1) of row r, each times its value_scale
// (kScaled; else 1), for the tile's n keys (an odd n's last pair ends in 0); st keeps the scores.
// vcvtne2ps2bf16 rounds two vectors of weights to nearest even, and vpermw interleaves them.
// Past a task's first tile the weights are made against the rows' running max at once, and made
// again against running_max's max only where a row's sum of them passes 2^kRescaleSlack, as it
// does whenever one score passes the max by more than kRescaleSlack (running_max's own test):
// the same weights without running_max's pass over the scores at almost every tile
// (BENCHMARKS.md, session 42), and one test a row vector and tile instead of one a weight
// (session 70). A sum past it from weights under it, or a weight past it by rounding at the
// slack's edge, leaves running_max's max as it was: the weights come out the same.
template <bool kCausal, bool kScaled, bool kScaledScores = false>
void softmax_pairs(Scratch& w, int64_t RP, int64_t D, int64_t c, int64_t n, int64_t t0,
                   const float* value_scale, uint32_t* pp, const float* score_scale = nullptr) {
  // Word 2r of the pair vector: word r of the converted vector (key 2k's weights); word 2r + 1:
  // word 16 + r (key 2k + 1's).
  alignas(64) static constexpr uint16_t kInterleave[32] = {
      0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i order = _mm512_load_si512(kInterleave);
  const __m512 pos = (__m512)(vload(w.pos.data() + c) - static_cast<float>(t0));
  const float* s = w.st.data() + c;
  // The weights against mx into pp, and their sum; with kCheck, `passed` gets the lanes whose
  // sum passes 2^(limit - mx), which any score above `limit` makes it do (then running_max
  // tests for a new max and these weights are made again against its max).
  const auto weights = [&](auto check_tag, __m512 mx, __m512 limit, __mmask16& passed) {
    constexpr bool kCheck = decltype(check_tag)::value;
    __m512 sum = _mm512_setzero_ps();
    const auto weight = [&](int64_t j) {
      if (j >= n) return _mm512_setzero_ps();
      const __m512 score = _mm512_loadu_ps(s + j * RP);
      // The AMX tile's products times the key's factor, less the max, in one rounding.
      __m512 x = kScaledScores ? _mm512_fmsub_ps(score, _mm512_set1_ps(score_scale[j]), mx)
                               : _mm512_sub_ps(score, mx);
      if constexpr (kCausal) {  // lanes whose position is before key j
        const __mmask16 masked = _mm512_cmp_ps_mask(pos, _mm512_set1_ps(static_cast<float>(j)), _CMP_LT_OQ);
        x = _mm512_mask_mov_ps(x, masked, _mm512_set1_ps(kMasked));
      }
      const __m512 e = softmax_exp2(x);
      sum = _mm512_add_ps(sum, e);
      if constexpr (kScaled) return _mm512_mul_ps(e, _mm512_set1_ps(value_scale[j]));
      return e;
    };
    for (int64_t k = 0; 2 * k < n; ++k) {
      const __m512 even = weight(2 * k);
      const __m512bh both = _mm512_cvtne2ps_pbh(weight(2 * k + 1), even);
      _mm512_storeu_si512(pp + k * RP + c, _mm512_permutexvar_epi16(order, (__m512i)both));
    }
    if constexpr (kCheck)
      passed = _mm512_cmp_ps_mask(sum, softmax_exp2(_mm512_sub_ps(limit, mx)), _CMP_GT_OQ);
    return sum;
  };
  __mmask16 passed = 0;
  __m512 sum = _mm512_setzero_ps();
  // Past the first tile, every row has a max (key 0 is in the first): the weights against it,
  // the test for a new one on the way (running_max's own pass over the scores, spared).
  if (t0 > 0) {
    const __m512 m = _mm512_loadu_ps(w.m.data() + c);
    sum = weights(std::true_type{}, m, _mm512_add_ps(m, _mm512_set1_ps(kRescaleSlack)), passed);
  }
  if (t0 == 0 || passed != 0) {
    const __m512 mx =
        (__m512)running_max<kScaledScores>(w, RP, D, c, n, t0, kCausal, kLn2, score_scale);
    sum = weights(std::false_type{}, mx, mx, passed);
  }
  vstore(w.l.data() + c, vload(w.l.data() + c) + (vfloat)sum);
}

// softmax_pairs for every row vector of a tile: `value_scale` null for a bf16 cache;
// `score_scale` (key j's factor, where the scores in `st` are the products alone: the AMX tile)
// null where they are scaled already.
inline void softmax_pairs_rows(Scratch& w, int64_t RP, int64_t D, int64_t n, int64_t t0,
                               bool causal, const float* value_scale, uint32_t* pp,
                               const float* score_scale = nullptr) {
  const auto rows = [&](auto causal_tag, auto scaled_tag, auto scores_tag) {
    for (int64_t c = 0; c < RP; c += kLanes)
      softmax_pairs<decltype(causal_tag)::value, decltype(scaled_tag)::value,
                    decltype(scores_tag)::value>(w, RP, D, c, n, t0, value_scale, pp,
                                                 score_scale);
  };
  const auto scaled_values = [&](auto causal_tag, auto scores_tag) {
    using yes = std::true_type;
    using no = std::false_type;
    value_scale == nullptr ? rows(causal_tag, no{}, scores_tag)
                           : rows(causal_tag, yes{}, scores_tag);
  };
  const auto causal_rows = [&](auto scores_tag) {
    causal ? scaled_values(std::true_type{}, scores_tag)
           : scaled_values(std::false_type{}, scores_tag);
  };
  score_scale == nullptr ? causal_rows(std::false_type{}) : causal_rows(std::true_type{});
}

// vt[k][d] = (value[2k][d], value[2k + 1][d]) as a bf16 pair for the tile's n keys (an odd n's
// last pair ends in 0): 16 dims per step.
inline void pair_values_by_key(const c10::BFloat16* const* value, int64_t n, int64_t D,
                               uint32_t* vt) {
  for (int64_t k = 0; 2 * k < n; ++k) {
    const auto* a = reinterpret_cast<const uint16_t*>(value[2 * k]);
    const auto* b = 2 * k + 1 < n ? reinterpret_cast<const uint16_t*>(value[2 * k + 1]) : nullptr;
    uint32_t* dst = vt + k * D;
    int64_t d = 0;
    for (; d + 16 <= D; d += 16) {
      const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + d)));
      const __m512i hi = b == nullptr ? _mm512_setzero_si512()
                                      : _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                                                              reinterpret_cast<const __m256i*>(b + d))),
                                                          16);
      _mm512_storeu_si512(dst + d, _mm512_or_si512(lo, hi));
    }
    for (; d < D; ++d) dst[d] = a[d] | (b == nullptr ? 0u : uint32_t(b[d]) << 16);
  }
}

// n int8 codes as bf16, exactly (|code| <= 128 needs 8 bits): 16 at a time.
inline void int8_codes_to_bf16(const int8_t* src, int64_t n, c10::BFloat16* dst) {
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d))));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + d), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(f)));
  }
  for (; d < n; ++d) dst[d] = static_cast<c10::BFloat16>(static_cast<float>(src[d]));
}

// write_outputs (prefill_attention.h) for bf16 outputs, RP % 16 == 0: 16 rows by 16 dims
// transposed in registers at a time, each row's 16 outputs over its sum rounded to bf16 (to
// nearest even, as the scalar conversion) and stored at once; D % 16 != 0: write_outputs. The
// scalar loop took ~3 cycles an output: the AMX tile at a 2,000-token prompt is 13 % faster
// without it (BENCHMARKS.md, session 67).
inline void write_outputs_bf16(const Scratch& w, int64_t RP, c10::BFloat16* out, int64_t q_row0,
                               int64_t count, int64_t kvh, const Layout& L, int64_t first = 0) {
  const int64_t G = L.H / L.KVH, D = L.D, rows = std::min(count * G, first + RP) - first;
  if (D % 16 != 0) return write_outputs(w, RP, out, q_row0, count, kvh, L, first);
  for (int64_t c0 = 0; c0 < rows; c0 += 16) {
    const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.f), _mm512_loadu_ps(w.l.data() + c0));
    for (int64_t d0 = 0; d0 < D; d0 += 16) {
      __m512i x[16];  // x[i]: dim d0 + i of the 16 rows, then x[j]: row c0 + j's 16 dims
      for (int i = 0; i < 16; ++i)
        x[i] = _mm512_castps_si512(
            _mm512_mul_ps(_mm512_loadu_ps(w.ot.data() + (d0 + i) * RP + c0), inv));
      transpose16(x);
      for (int64_t j = 0; j < std::min<int64_t>(16, rows - c0); ++j) {
        const int64_t r = first + c0 + j, i = r / G, g = r % G;
        auto* dst = out + ((q_row0 + i) * L.H + kvh * G + g) * D + d0;
        const __m256bh y = _mm512_cvtneps_pbh(_mm512_castsi512_ps(x[j]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), reinterpret_cast<__m256i>(y));
      }
    }
  }
}

// w.qp = the task's queries as pairs ([D/2][RP], row r = i * G + g), zero in the padding rows:
// 16 rows by 16 pairs transposed in registers at a time (RP % 16 == 0).
inline void pair_queries(const c10::BFloat16* q, int64_t q_row0, int64_t count, int64_t kvh,
                         const Layout& L, int64_t RP, Scratch& w) {
  const int64_t G = L.H / L.KVH, D = L.D, pairs = D / 2, rows = count * G;
  w.qp.resize(pairs * RP);  // every element written below
  const auto row = [&](int64_t r) {  // row r's pairs
    return reinterpret_cast<const uint32_t*>(q + (q_row0 + r / G) * L.q_stride +
                                             (kvh * G + r % G) * D);
  };
  int64_t p0 = 0;
  for (; p0 + 16 <= pairs; p0 += 16)
    for (int64_t r0 = 0; r0 < RP; r0 += 16) {
      __m512i x[16];  // x[i]: row r0 + i's 16 pairs, then x[j]: pair p0 + j of the 16 rows
      for (int i = 0; i < 16; ++i)
        x[i] = r0 + i < rows ? _mm512_loadu_si512(row(r0 + i) + p0) : _mm512_setzero_si512();
      transpose16(x);
      for (int j = 0; j < 16; ++j) _mm512_storeu_si512(w.qp.data() + (p0 + j) * RP + r0, x[j]);
    }
  for (; p0 < pairs; ++p0)
    for (int64_t r = 0; r < RP; ++r) w.qp[p0 * RP + r] = r < rows ? row(r)[p0] : 0u;
}

// Room for `keys` rows of an int8 cache's codes as bf16 and their scales (int8_rows into w.kb,
// w.ks, w.vb, w.vs: the pairs tile's per key tile; the AMX tile keeps a task's keys whole).
inline void size_int8_rows(int64_t keys, int64_t D, Scratch& w) {
  w.kb.resize(keys * D);
  w.vb.resize(keys * D);
  w.ks.assign(keys, 0.f);
  w.vs.resize(keys);
}

// Key rows row0..row0 + 15 of an int8 cache block ([D/4][block_size][4], each byte plus 128) as
// bf16 codes into dst ([16][D]): per 64 dims, the 16 groups of 4 bytes of the 16 rows (each
// group's rows contiguous, 64 bytes) transposed in registers into the rows' 64 codes.
// D % 64 == 0, row0 + 16 <= block_size.
inline void int8_key_rows16(const int8_t* block, int64_t row0, int64_t D, int64_t BS,
                            c10::BFloat16* dst) {
  for (int64_t d0 = 0; d0 < D; d0 += 64) {
    __m512i x[16];  // x[i]: dims d0 + 4i.. of the 16 rows, then x[r]: row row0 + r's 64 dims
    for (int i = 0; i < 16; ++i)
      x[i] = _mm512_loadu_si512(block + attention::int8_key_at(row0, d0 + 4 * i, BS));
    transpose16(x);
    for (int r = 0; r < 16; ++r) {
      const __m512i codes = _mm512_xor_si512(x[r], _mm512_set1_epi8(-128));
      // Quarter k of the codes (k an immediate: a loop's index is one only where the compiler
      // unrolls the loop, which -O1, the narrower builds', does not).
      const auto quarter = [&](__m128i q, int k) {
        const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + r * D + d0 + 16 * k),
                            reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(f)));
      };
      quarter(_mm512_castsi512_si128(codes), 0);
      quarter(_mm512_extracti32x4_epi32(codes, 1), 1);
      quarter(_mm512_extracti32x4_epi32(codes, 2), 2);
      quarter(_mm512_extracti32x4_epi32(codes, 3), 3);
    }
  }
}

// An int8 cache's rows t0..t0 + n - 1 as bf16 codes (exact) and their scales: keys into kb and
// ks, values into vb and vs, row j at j * D. The scales then multiply the scores and the weights
// in fp32, so the codes pass through bf16 unrounded. A block's keys 16 rows at a time where
// blocks hold whole 16s and D % 64 == 0 (the rows up to the 16 past the last key too: kb holds
// room for them, and they are never read).
inline void int8_rows(const attention::KVView<int8_t>& kv, int64_t t0, int64_t n, int64_t D,
                      c10::BFloat16* kb, float* ks, c10::BFloat16* vb, float* vs) {
  const int64_t BS = kv.block_size;
  const bool by16 = BS % 16 == 0 && D % 64 == 0;
  std::vector<int8_t> codes(D);
  for (int64_t j0 = 0; j0 < n;) {  // the rows of one block at a time
    const int64_t t = t0 + j0, b = t / BS, row = t % BS, m = std::min(n - j0, BS - row);
    const int8_t* keys = kv.k_block(b);
    int64_t j = 0;
    if (by16 && row % 16 == 0)
      for (; j < m; j += 16) int8_key_rows16(keys, row + j, D, BS, kb + (j0 + j) * D);
    for (; j < m; ++j) {
      for (int64_t d = 0; d < D; d += 4) {
        uint32_t four;
        std::memcpy(&four, keys + attention::int8_key_at(row + j, d, BS), sizeof(four));
        four ^= 0x80808080u;
        std::memcpy(codes.data() + d, &four, sizeof(four));
      }
      int8_codes_to_bf16(codes.data(), D, kb + (j0 + j) * D);
    }
    int8_codes_to_bf16(kv.v_block(b) + row * D, m * D, vb + j0 * D);
    for (int64_t i = 0; i < m; ++i) {
      ks[j0 + i] = kv.k_scales(b)[row + i];
      vs[j0 + i] = kv.v_scales(b)[row + i];
    }
    j0 += m;
  }
}

// Keys t0..t0 + n - 1 of one (sequence, KV head) into `dst` (from key t0 on): an int8 cache's
// keys converted with their scales, the values paired by key (an odd n pairs its last value with
// 0). vb: room for n bf16 value rows of an int8 cache. n <= kKeyTile.
template <typename C>
void pair_rows(const attention::KVView<C>& kv, int64_t t0, int64_t n, int64_t D,
               const PairedKV& dst, LineVector<c10::BFloat16>& vb) {
  const c10::BFloat16* value[kKeyTile];
  if constexpr (std::is_same_v<C, int8_t>) {
    vb.resize(n * D);
    int8_rows(kv, t0, n, D, dst.key_codes, dst.key_scale, vb.data(), dst.value_scale);
    for (int64_t j = 0; j < n; ++j) value[j] = vb.data() + j * D;
  } else {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t t = t0 + j;
      value[j] = kv.v_block(t / kv.block_size) + (t % kv.block_size) * D;
    }
  }
  pair_values_by_key(value, n, D, dst.value_pairs);
}

// Asks for key tile [t1, t2)'s operands ahead of its scores (after this tile's, so that they
// come in while its softmax and values run): the keys the products broadcast into L1 (a bf16
// cache's rows in place, an int8 cache's paired codes); where this task pairs its own tiles,
// the cache rows pair_rows reads, into L2. A group's first task finds its keys in memory, in
// blocks scattered where the hardware prefetchers cannot follow.
template <typename C>
inline void prefetch_key_tile(const attention::KVView<C>& kv, const PairedKV& paired, int64_t t1,
                              int64_t t2, int64_t D) {
  constexpr bool int8_cache = std::is_same_v<C, int8_t>;
  const int64_t BS = kv.block_size;
  if (paired.value_pairs == nullptr) {
    for (int64_t b = t1 / BS; b * BS < t2; ++b) attention::prefetch_kv_block(kv, b, D * int64_t(sizeof(C)));
    if constexpr (int8_cache) return;
  }
  if constexpr (int8_cache) {
    const char* codes = reinterpret_cast<const char*>(paired.at(t1, D).key_codes);
    for (int64_t k = 0; k < (t2 - t1) * D * 2; k += 64) prefetch_l1(codes + k);
  } else {
    for (int64_t t = t1; t < t2;) {  // a block's rows at a time
      const int64_t row = t % BS, m = std::min(t2 - t, BS - row);
      const char* keys = reinterpret_cast<const char*>(kv.k_block(t / BS) + row * D);
      for (int64_t k = 0; k < m * D * 2; k += 64) prefetch_l1(keys + k);
      t += m;
    }
  }
}

// As attend_tile (prefill_attention.cpp) for bf16 queries and a bf16 or int8 cache (D even),
// its products on bf16 pairs, its keys and values as `paired` holds them (from key 0), or paired
// here per key tile where it holds none; not inlined either.
template <typename C>
[[gnu::noinline]] void attend_tile_pairs(const c10::BFloat16* q, c10::BFloat16* out,
                       const attention::KVView<C>& kv, const PairedKV& paired, int64_t q_row0,
                       int64_t count, int64_t pos0, int64_t kvh, const Layout& L, Scratch& w) {
  static_assert(std::is_same_v<C, c10::BFloat16> || std::is_same_v<C, int8_t>);
  static_assert(kKeyTile % 2 == 0, "a key tile's values start a pair");
  constexpr bool int8_cache = std::is_same_v<C, int8_t>;
  const int64_t G = L.H / L.KVH, D = L.D, BS = L.BS, rows = count * G, pairs = D / 2;
  const int64_t RP = (rows + kRowBlock - 1) / kRowBlock * kRowBlock;
  const int64_t KP = (kKeyTile + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  w.start(rows, RP, D, KP, G, pos0);
  w.pp.resize((KP / 2 + 1) * RP);
  w.zero_pairs.assign(pairs, 0u);
  w.kpairs.resize(KP);
  const bool own_tiles = paired.value_pairs == nullptr;
  PairedKV tile_rows;  // where this task pairs its own tiles: one key tile's, in the scratch
  if (own_tiles) {
    w.vt.resize(KP / 2 * D);
    if constexpr (int8_cache) size_int8_rows(KP, D, w);
    tile_rows = {w.vt.data(), int8_cache ? w.kb.data() : nullptr,
                 int8_cache ? w.ks.data() : nullptr, int8_cache ? w.vs.data() : nullptr};
  }
  pair_queries(q, q_row0, count, kvh, L, RP, w);
  const int64_t last = pos0 + count - 1;
  for (int64_t t0 = 0; t0 <= last; t0 += kKeyTile) {
    const int64_t n = std::min(kKeyTile, last + 1 - t0);
    if (own_tiles) pair_rows(kv, t0, n, D, tile_rows, w.vb);
    const PairedKV tile = own_tiles ? tile_rows : paired.at(t0, D);  // from key t0 on
    if constexpr (int8_cache) {
      for (int64_t j = 0; j < n; ++j)
        w.kpairs[j] = reinterpret_cast<const uint32_t*>(tile.key_codes + j * D);
    } else {
      for (int64_t j0 = 0; j0 < n;) {  // a block's rows at a time
        const int64_t t = t0 + j0, row = t % BS, m = std::min(n - j0, BS - row);
        const auto* keys = reinterpret_cast<const uint32_t*>(kv.k_block(t / BS) + row * D);
        for (int64_t j = 0; j < m; ++j) w.kpairs[j0 + j] = keys + j * pairs;
        j0 += m;
      }
    }
    const int64_t nk = (n + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
    std::fill(w.kpairs.begin() + n, w.kpairs.begin() + nk, w.zero_pairs.data());
    for (int64_t c = 0; c < RP; c += kRowBlock)
      for (int64_t j = 0; j < nk; j += kKeyBlock)
        pair_scores<kKeyBlock>(w.qp.data(), RP, w.kpairs.data() + j,
                               int8_cache ? tile.key_scale + j : nullptr, pairs, L.scale * kLog2e,
                               w.st.data() + j * RP, c);
    if (t0 + kKeyTile <= last)
      prefetch_key_tile(kv, paired, t0 + kKeyTile, std::min(t0 + 2 * kKeyTile, last + 1), D);
    const bool causal = t0 + n - 1 > pos0;
    softmax_pairs_rows(w, RP, D, n, t0, causal, tile.value_scale, w.pp.data());
    const int64_t np = (n + 1) / 2;
    for (int64_t c = 0; c < RP; c += kRowBlock) {
      int64_t d = 0;
      for (; d + kDimBlock <= D; d += kDimBlock)
        pair_values<kDimBlock>(w.pp.data(), RP, tile.value_pairs, D, np, w.ot.data(), c, d);
      for (; d + 2 <= D; d += 2)
        pair_values<2>(w.pp.data(), RP, tile.value_pairs, D, np, w.ot.data(), c, d);
    }
  }
  write_outputs_bf16(w, RP, out, q_row0, count, kvh, L);
}
#else
constexpr bool kPairsTile = false;
#endif

}  // namespace roseinfer::prefill
