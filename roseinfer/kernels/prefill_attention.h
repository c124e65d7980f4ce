// The prefill attention kernel's shared pieces (prefill_attention.cpp runs it; its fp32 tile,
// the bf16-pairs tile of prefill_dpbf16.h and the AMX tile of prefill_amx.h share them): a task
// is one (sequence, KV head, up to kQueryTile queries), its G query heads' rows along the
// vectors' lanes, fp32 online softmax over tiles of kKeyTile keys, its outputs accumulated
// transposed ([D][RP]) and written at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_kv.h"
#include "lane_rows.h"
#include "line_storage.h"
#include "vec.h"

namespace roseinfer::prefill {

constexpr int64_t kQueryTile = 32;  // queries per task: G * 32 rows share each key tile's load
// The AMX tile's: its 32-row blocks share what the task makes of each key tile (the values
// paired and transposed), so more queries per task make it fewer times; 64 against 32 and 128,
// SmolLM2's 30 layers at a 2,000-token prompt: 132 against 144 and 137 ms (BENCHMARKS.md,
// session 67).
constexpr int64_t kAmxQueryTile = 64;
constexpr int64_t kKeyTile = 64;    // keys per step of the online softmax (whole cache blocks)

// The products' register tiles: kRowVecs registers of query rows by kKeyBlock keys (scores) or
// by kDimBlock head dims (outputs), as many accumulators as the register file leaves room for.
using lanes::kLanes, lanes::vfloat, lanes::vint, lanes::vload, lanes::vstore, lanes::vsplat;
#if defined(__AVX512F__)
constexpr int kRowVecs = 2, kKeyBlock = 8, kDimBlock = 8;
#else
constexpr int kRowVecs = 2, kKeyBlock = 6, kDimBlock = 6;
#endif
constexpr int64_t kRowBlock = kRowVecs * kLanes;  // a task's rows are padded to a multiple

struct Layout {
  int64_t H, KVH, D, BS;
  int64_t q_stride;  // elements between q's rows (a view of the fused qkv output, say)
  float scale;
};

// How far a row's running max may fall behind its scores before the outputs and the sum are
// rescaled (softmax_rows): weights then stay below e^8 (~3,000; 2^8 for the tiles whose scores
// are in base 2), far inside fp32 and bf16.
constexpr float kRescaleSlack = 8.f;

// e^x for x <= kRescaleSlack (scores minus their row's running max), lane by lane: exp16 where
// the build has AVX-512; else as exp16 computes it, 2^n * 2^f with 2^f by its degree-6 Taylor
// polynomial (relative error < 2e-7) and n rounded to nearest by adding and taking away 1.5 *
// 2^23. x is clamped to -87, where e^x is still normal.
inline vfloat exp_lanes(vfloat x) {
#if defined(__AVX512F__)
  return (vfloat)exp16((__m512)x);
#else
  x = x < -87.0f ? vfloat{} - 87.0f : x;
  const vfloat t = x * 1.44269504088896341f;
  const vfloat n = (t + 12582912.0f) - 12582912.0f;
  const vfloat f = t - n;
  vfloat p = vfloat{} + kExp2Poly[0];
  for (int i = 1; i < 7; ++i) p = p * f + kExp2Poly[i];
  const vint bits = (__builtin_convertvector(n, vint) + 127) << 23;  // 2^n, n in [-126, 12]
  vfloat scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
#endif
}

// Whether any lane of a comparison's result is true.
inline bool any_lane(vint mask) {
  int32_t lanes[kLanes];
  std::memcpy(lanes, &mask, sizeof(mask));
  int32_t any = 0;
  for (int64_t i = 0; i < kLanes; ++i) any |= lanes[i];
  return any != 0;
}

// A task's scratch, query rows along the vectors' lanes (the rows padded to kRowBlock): its
// outputs transposed ([D][RP], fp32), the rows' running max and sum and positions, a key tile's
// scores and then weights ([keys][RP], fp32), and what each tile kind keeps of its operands.
// Every row the vectors and tiles read starts on a cache line (line_storage.h).
struct Scratch {
  LineVector<float> ot, m, l, pos, st;
  // fp32 tile: scaled queries ([D][RP]), key/value rows widened from the cache where it does
  // not hold fp32, and a zero row for the key blocks' padding.
  LineVector<float> qt, k, v, zero;
  std::vector<const float*> krow, vrow;
  // bf16-pairs and AMX tiles (prefill_dpbf16.h): queries and weights as bf16 pairs ([D/2][RP],
  // [keys/2][RP]) and the key rows' pointers.
  LineVector<uint32_t> qp, pp, zero_pairs;
  std::vector<const uint32_t*> kpairs;
  // AMX tile (prefill_amx.h): a key tile's values paired by key ([keys/2][D]), then each key
  // tile's transposed ([D][keys/2], the task's tiles in turn); an int8 cache's codes as bf16
  // and its row scales.
  LineVector<uint32_t> vt, vtt;
  LineVector<c10::BFloat16> kb, vb;
  LineVector<float> ks, vs;
  LineVector<float> score_scale;  // each key's scores' factor, read by the softmax
  std::vector<const c10::BFloat16*> vrow_bf16;

  // Sizes the parts every tile uses, and sets the rows' positions (the padding rows repeat the
  // last row's), max (-inf), sum and outputs (0) for RP of a task's `rows` rows from row
  // `first` (row r = i * G + g; the AMX tile takes a task's rows 32 at a time).
  void start(int64_t rows, int64_t RP, int64_t D, int64_t KP, int64_t G, int64_t pos0,
             int64_t first = 0) {
    ot.assign(D * RP, 0.f);
    m.assign(RP, -std::numeric_limits<float>::infinity());
    l.assign(RP, 0.f);
    pos.resize(RP);
    for (int64_t r = 0; r < RP; ++r)
      pos[r] = static_cast<float>(pos0 + std::min(first + r, rows - 1) / G);
    st.resize(KP * RP);
  }
};

// The max that the weights of kLanes rows from c are taken against, for a key tile's n keys at
// positions t0..: the rows' running max, kept while no row's scores in the tile pass it by more
// than kRescaleSlack (flash attention 4's lazy rescaling: the outputs and sum need no pass then);
// else the new max, the rows' outputs and sum rescaled to it. Keys past a row's own position
// (`causal`: the tile reaches past the first row's) take no part. `unit`: the scores' log base's
// natural log (1 for scores whose weights are e^x, ln 2 for 2^x).
template <bool kScaledScores = false>
inline vfloat running_max(Scratch& w, int64_t RP, int64_t D, int64_t c, int64_t n, int64_t t0,
                          bool causal, float unit = 1.f, const float* score_scale = nullptr) {
  const vfloat pos = vload(w.pos.data() + c) - static_cast<float>(t0);  // last key seen, in tile
  const vfloat m = vload(w.m.data() + c);
  const float* s = w.st.data() + c;
  // Four chains of maxes: one chain waits on each max before the next (BENCHMARKS.md, session
  // 37).
  const auto key = [&](int64_t j) {
    vfloat x = vload(s + j * RP);
    if constexpr (kScaledScores) x = x * score_scale[j];  // (the products' scale: the AMX tile)
    return causal ? (static_cast<float>(j) <= pos ? x : vfloat{} - INFINITY) : x;
  };
  vfloat part[4] = {m, m, m, m};
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int i = 0; i < 4; ++i) {
      const vfloat x = key(j + i);
      part[i] = x > part[i] ? x : part[i];
    }
  for (; j < n; ++j) {
    const vfloat x = key(j);
    part[0] = x > part[0] ? x : part[0];
  }
  const vfloat mx01 = part[0] > part[1] ? part[0] : part[1];
  const vfloat mx23 = part[2] > part[3] ? part[2] : part[3];
  const vfloat mx = mx01 > mx23 ? mx01 : mx23;
  if (!any_lane(mx > m + kRescaleSlack)) return m;  // m = -inf (the first tile) never stays
  const vfloat alpha = exp_lanes((m - mx) * unit);    // ~0 for the first tile
  vstore(w.l.data() + c, vload(w.l.data() + c) * alpha);
  vstore(w.m.data() + c, mx);
  for (int64_t d = 0; d < D; ++d) {
    float* o = w.ot.data() + d * RP + c;
    vstore(o, vload(o) * alpha);
  }
  return mx;
}

// Key j's weights for kLanes rows, its scores at s + j * RP: e^(score - mx), zero past a row's
// position `pos` (in the tile) where `causal` (also e^x of a large x there).
inline vfloat key_weights(const float* s, int64_t RP, int64_t j, vfloat mx, vfloat pos,
                          bool causal) {
  const vfloat e = exp_lanes(vload(s + j * RP) - mx);
  return causal ? (static_cast<float>(j) <= pos ? e : vfloat{}) : e;
}

// The online softmax of kLanes rows from c over a tile's n keys at positions t0..: scores into
// weights exp(s - running max) in place, zero past a row's own position where `causal`; each
// row's sum updated (its max and outputs by running_max).
inline void softmax_rows(Scratch& w, int64_t RP, int64_t D, int64_t c, int64_t n, int64_t t0,
                         bool causal) {
  const vfloat pos = vload(w.pos.data() + c) - static_cast<float>(t0);
  const vfloat mx = running_max(w, RP, D, c, n, t0, causal);
  float* s = w.st.data() + c;
  vfloat sum = {};
  for (int64_t j = 0; j < n; ++j) {
    const vfloat e = key_weights(s, RP, j, mx, pos, causal);
    vstore(s + j * RP, e);
    sum += e;
  }
  vstore(w.l.data() + c, vload(w.l.data() + c) + sum);
}

// out[(q_row0 + i) * H + kvh * G + g] = the outputs of the task's rows r = i * G + g from
// `first` (in w at r - first, up to RP of them) over their row's sum, in T.
template <typename T>
void write_outputs(const Scratch& w, int64_t RP, T* out, int64_t q_row0, int64_t count,
                   int64_t kvh, const Layout& L, int64_t first = 0) {
  const int64_t G = L.H / L.KVH, D = L.D;
  for (int64_t r = first; r < std::min(count * G, first + RP); ++r) {
    const int64_t i = r / G, g = r % G, c = r - first;
    const float inv = 1.f / w.l[c];
    T* dst = out + ((q_row0 + i) * L.H + kvh * G + g) * D;
    for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<T>(w.ot[d * RP + c] * inv);
  }
}

// dst[0, n) = src[0, n) widened to fp32, times `scale`.
template <typename C>
inline void widen_row(const C* src, int64_t n, float scale, float* dst) {
  int64_t d = 0;
#if defined(ROSEINFER_VECF)
  for (; d + kVecLanes <= n; d += kVecLanes)
    vstore(dst + d, static_cast<vfloat>(vec_load(src + d)) * scale);
#endif
  for (; d < n; ++d) dst[d] = to_float(src[d]) * scale;
}

// Row `row` of an int8 cache block's keys ([D/4][block_size][4], each byte plus 128) as D fp32
// values times `scale`: 4 inputs at a time.
inline void widen_int8_key(const int8_t* block, int64_t row, int64_t D, int64_t BS, float scale,
                           float* dst) {
  typedef int8_t v4i8 __attribute__((vector_size(4)));
  typedef float v4f __attribute__((vector_size(4 * sizeof(float))));
  for (int64_t d = 0; d < D; d += 4) {
    v4i8 b;
    std::memcpy(&b, block + attention::int8_key_at(row, d, BS), sizeof(b));
    const v4f x = __builtin_convertvector(b ^ static_cast<int8_t>(-128), v4f) * scale;
    std::memcpy(dst + d, &x, sizeof(x));
  }
}

}  // namespace roseinfer::prefill
