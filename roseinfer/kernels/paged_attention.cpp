// Paged decode attention on CPU: one query token per sequence, keys and values read in place
// from the block-paged cache (no gathered copy), fp32 accumulation, fp32/bf16/fp16 storage or
// int8 with one fp32 scale per (token, KV head) row (`--kv-cache-dtype int8`).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "vec.h"

namespace roseinfer {
namespace {

// The cache is head-major, [num_blocks, KVH, block_size, D]: one KV head's rows of a block are
// contiguous, so a (sequence, KV head) task streams whole runs of memory instead of picking one
// head out of every slot (the hardware prefetchers follow runs; they cannot follow strides
// across scattered blocks).

// One (sequence, KV head)'s keys and values in the paged cache. `k`/`v` point at this KV head's
// rows of block 0 and `block_stride` elements separate consecutive blocks; int8 caches also
// have a scale per row, `k_scale`/`v_scale` at this head's scales of block 0, `scale_stride`
// apart per block (nullptr for the other dtypes).
template <typename C>
struct KVView {
  const C* k;
  const C* v;
  const float* k_scale;
  const float* v_scale;
  const int64_t* table;
  int64_t len, block_size, block_stride, scale_stride;

  const C* k_block(int64_t b) const { return k + table[b] * block_stride; }
  const C* v_block(int64_t b) const { return v + table[b] * block_stride; }
  const float* k_scales(int64_t b) const { return k_scale + table[b] * scale_stride; }
  const float* v_scales(int64_t b) const { return v_scale + table[b] * scale_stride; }
};

// int8 caches keep a (block, KV head)'s keys transposed in groups of 4 inputs, [D/4][block_size]
// [4], each byte plus 128 (`k ^ 0x80`, an unsigned byte): the next 4 inputs of 16 keys are one
// 64-byte load, which vpdpbusd multiplies by 4 broadcast query bytes into 16 lanes, one sum per
// key, so no horizontal sums, and the 128 * sum(q) that the +128 adds comes off once per query
// head. Values keep rows, [block_size][D]. `roseinfer.layers.kv_cache` writes and reads the same.
inline int64_t int8_key_at(int64_t row, int64_t d, int64_t block_size) {
  return (d / 4) * block_size * 4 + row * 4 + d % 4;
}
inline float int8_key(const int8_t* block, int64_t row, int64_t d, int64_t block_size) {
  return static_cast<float>(static_cast<int8_t>(block[int8_key_at(row, d, block_size)] ^ 0x80));
}

// Scores of one query head against keys [len] then the softmax-weighted sum of values.
// Plain loops: correct for any head_dim, cache dtype and instruction set.
template <typename C>
void attend_head_scalar(const float* q, const KVView<C>& kv, int64_t head_dim, float scale,
                        float* scores, float* acc) {
  auto row = [&](const C* block0, int64_t t) {
    return block0 + kv.table[t / kv.block_size] * kv.block_stride + (t % kv.block_size) * head_dim;
  };
  auto row_scale = [&](const float* scale0, int64_t t) {
    return scale0 == nullptr
               ? 1.f
               : scale0[kv.table[t / kv.block_size] * kv.scale_stride + t % kv.block_size];
  };
  const int64_t len = kv.len;
  for (int64_t t = 0; t < len; ++t) {
    float s = 0.f;
    if constexpr (std::is_same_v<C, int8_t>) {
      const int8_t* block = kv.k_block(t / kv.block_size);
      for (int64_t d = 0; d < head_dim; ++d)
        s += q[d] * int8_key(block, t % kv.block_size, d, kv.block_size);
    } else {
      const C* key = row(kv.k, t);
      // Vectorised (AVX2 where there is no AVX-512 kernel): the sum in lane order, not left
      // to right.
#pragma omp simd reduction(+ : s)
      for (int64_t d = 0; d < head_dim; ++d) s += q[d] * to_float(key[d]);
    }
    scores[t] = s * row_scale(kv.k_scale, t) * scale;
  }
  const float mx = *std::max_element(scores, scores + len);
  float sum = 0.f;
  for (int64_t t = 0; t < len; ++t) sum += (scores[t] = std::exp(scores[t] - mx));
  std::fill(acc, acc + head_dim, 0.f);
  for (int64_t t = 0; t < len; ++t) {
    const C* value = row(kv.v, t);
    const float p = scores[t] / sum * row_scale(kv.v_scale, t);
    for (int64_t d = 0; d < head_dim; ++d) acc[d] += p * to_float(value[d]);
  }
}

// A kernel for the G query heads of one KV head: (q [G, D] fp32 unscaled, the head's K/V, scale,
// scores [G, len], probs [G, len + 1], acc [G, D]).
template <typename C>
using GroupFn = void (*)(const float*, const KVView<C>&, float, float*, c10::BFloat16*, float*);

#if defined(__AVX512F__)
// Asks for one block's rows of a head ahead of use: the blocks of a sequence are scattered, so
// the hardware prefetchers cannot see the next one coming, and a decode step reads K/V that the
// weights streamed through since have evicted from the caches. Into L2: L1's fill buffers are
// too few to keep enough lines in flight.
inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(c + b, _MM_HINT_T1);
}

constexpr int64_t kPrefetchBlocks = 4;  // 2 and 8 measured no better (BENCHMARKS.md)

// Block b of a (sequence, KV head)'s keys and values, K and V both: V is read right after the
// K pass, from L2 by then (a few KB per head).
// int8 caches: their scales too.
template <typename C>
inline void prefetch_kv_block(const KVView<C>& kv, int64_t b, int64_t row_bytes) {
  if (b * kv.block_size < kv.len) {
    const int64_t rows = std::min(kv.block_size, kv.len - b * kv.block_size);
    // int8 keys are transposed: any row's bytes span the whole block.
    prefetch_bytes(kv.k_block(b), (std::is_same_v<C, int8_t> ? kv.block_size : rows) * row_bytes);
    prefetch_bytes(kv.v_block(b), rows * row_bytes);
    if (kv.k_scale != nullptr) {
      prefetch_bytes(kv.k_scales(b), rows * int64_t(sizeof(float)));
      prefetch_bytes(kv.v_scales(b), rows * int64_t(sizeof(float)));
    }
  }
}

// q . row for one key row of 16 * NV elements, as 16 partial sums.
template <typename T, int NV>
inline __m512 dot_row(const __m512* q, const T* row) {
  __m512 s = _mm512_mul_ps(q[0], load16(row));
  for (int i = 1; i < NV; ++i) s = _mm512_fmadd_ps(q[i], load16(row + 16 * i), s);
  return s;
}

// Lane j of the result is the sum of v[j]'s 16 lanes: pairwise unpack/shuffle-and-add rounds,
// about three instructions per vector where one horizontal sum takes eight. kInt: the lanes
// hold int32 (vpdpbusd sums), added as integers.
template <bool kInt = false>
inline __m512 hsum16(const __m512* v) {
  auto add = [](__m512 a, __m512 b) {
    if constexpr (kInt)
      return _mm512_castsi512_ps(
          _mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
    else
      return _mm512_add_ps(a, b);
  };
  __m512 r[8], s[4];
  for (int i = 0; i < 8; ++i)  // per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3]
    r[i] = add(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
               _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // per 128-bit lane: the lane's partial sums of 4 vectors
    s[i] = add(_mm512_shuffle_ps(r[2 * i], r[2 * i + 1], 0x44),
               _mm512_shuffle_ps(r[2 * i], r[2 * i + 1], 0xEE));
  // Then across the four 128-bit lanes, twice.
  const __m512 t0 =
      add(_mm512_shuffle_f32x4(s[0], s[1], 0x88), _mm512_shuffle_f32x4(s[0], s[1], 0xDD));
  const __m512 t1 =
      add(_mm512_shuffle_f32x4(s[2], s[3], 0x88), _mm512_shuffle_f32x4(s[2], s[3], 0xDD));
  return add(_mm512_shuffle_f32x4(t0, t1, 0x88), _mm512_shuffle_f32x4(t0, t1, 0xDD));
}

// Turns each of the G rows of `len` scores (row stride `len`) into exp(score - row max) in
// place and returns 1 / (the row's sum) in inv_sum; `mxv` holds each row's running max lanes.
template <int G>
inline void softmax_numerators(float* scores, int64_t len, const __m512* mxv, float* inv_sum) {
  for (int g = 0; g < G; ++g) {
    float* sc = scores + g * len;
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(mxv[g]));
    __m512 sumv = _mm512_setzero_ps();
    int64_t t = 0;
    for (; t + 16 <= len; t += 16) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(sc + t), mx));
      _mm512_storeu_ps(sc + t, e);
      sumv = _mm512_add_ps(sumv, e);
    }
    if (t < len) {
      const __mmask16 m = static_cast<__mmask16>((1u << (len - t)) - 1);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, sc + t), mx));
      _mm512_mask_storeu_ps(sc + t, m, e);
      sumv = _mm512_add_ps(sumv, _mm512_maskz_mov_ps(m, e));
    }
    inv_sum[g] = 1.f / _mm512_reduce_add_ps(sumv);
  }
}

// Scores of G query heads against the keys, 16 keys at a time: `chunk(key, m, b, c, sc)` puts
// into sc[G] the scaled scores of the m <= 16 keys from row c of block b (`key` points at it);
// they are stored, and each row's max kept in mxv.
template <typename T, int G, typename Chunk>
inline void score_chunks(const Chunk& chunk, const KVView<T>& kv, int64_t D, float* scores,
                         __m512* mxv) {
  const int64_t len = kv.len, block_size = kv.block_size;
  for (int g = 0; g < G; ++g) mxv[g] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  // The first blocks were asked for by the caller, during the previous task.
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_kv_block(kv, b + kPrefetchBlocks, D * int64_t(sizeof(T)));
    const T* block = kv.k_block(b);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t c = 0; c < n; c += 16) {
      const int64_t m = std::min<int64_t>(16, n - c);
      const __mmask16 valid = static_cast<__mmask16>((1u << m) - 1);
      __m512 sc[G];
      chunk(block + c * D, m, b, c, sc);
      for (int g = 0; g < G; ++g) {
        _mm512_mask_storeu_ps(scores + g * len + start + c, valid, sc[g]);
        mxv[g] = _mm512_mask_max_ps(mxv[g], valid, mxv[g], sc[g]);
      }
    }
  }
}

// The float kernels' chunks: 16 dot-product vectors summed across lanes together (hsum16) cost
// a fraction of 16 separate horizontal sums. `dot(g, key)` is q_g . key as 16 partial sums.
template <typename T, int G, typename Dot>
inline void score_keys(const Dot& dot, const KVView<T>& kv, int64_t D, float scale,
                       float* scores, __m512* mxv) {
  const __m512 scalev = _mm512_set1_ps(scale);
  auto chunk = [&](const T* key, int64_t m, int64_t /*b*/, int64_t /*c*/, __m512* sc) {
    for (int g = 0; g < G; ++g) {
      __m512 dots[16];
      if (m == 16) {
        for (int j = 0; j < 16; ++j) dots[j] = dot(g, key + j * D);
      } else {
        for (int j = 0; j < 16; ++j) dots[j] = j < m ? dot(g, key + j * D) : _mm512_setzero_ps();
      }
      sc[g] = _mm512_mul_ps(hsum16(dots), scalev);
    }
  };
  score_chunks<T, G>(chunk, kv, D, scores, mxv);
}

// The G query heads that share one KV head, for head_dim = 16 * NV, any storage type: each key
// and value row is widened to fp32 for fp32 FMAs; queries and accumulators stay in registers.
template <typename T, int NV, int G>
void attend_group_avx512(const float* q, const KVView<T>& kv, float scale, float* scores,
                         c10::BFloat16* /*probs*/, float* acc) {
  constexpr int64_t D = 16 * NV;
  __m512 qv[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) qv[g][i] = _mm512_loadu_ps(q + (g * NV + i) * 16);
  auto dot = [&](int g, const T* row) { return dot_row<T, NV>(qv[g], row); };
  __m512 mxv[G];
  score_keys<T, G>(dot, kv, D, scale, scores, mxv);
  const int64_t len = kv.len, block_size = kv.block_size;
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum);
  __m512 av[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) av[g][i] = _mm512_setzero_ps();
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    const T* value = kv.v_block(b);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; ++j, value += D) {
      __m512 vv[NV];
      for (int i = 0; i < NV; ++i) vv[i] = load16(value + 16 * i);
      for (int g = 0; g < G; ++g) {
        const __m512 p = _mm512_set1_ps(scores[g * len + start + j]);
        for (int i = 0; i < NV; ++i) av[g][i] = _mm512_fmadd_ps(p, vv[i], av[g][i]);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    const __m512 inv = _mm512_set1_ps(inv_sum[g]);
    for (int i = 0; i < NV; ++i)
      _mm512_storeu_ps(acc + (g * NV + i) * 16, _mm512_mul_ps(av[g][i], inv));
  }
}

// Value rows two at a time, for the pair dot products (vdpbf16ps, vpdpwssd): rows t and t+1
// (zeros past a block's last row) unpacked as 16-bit elements give, per 32-bit lane, the pair
// (v[t][d], v[t+1][d]) to multiply with (p[t], p[t+1]), `p16` being the task's 16-bit
// probabilities [G, len + 1]. row(value, r, i): elements 32i.. of row r as 32 16-bit lanes;
// step(g, pv, ul, uh): head g's pair of probabilities (broadcast) and the unpacked rows.
template <int G, int NI, typename C, typename Row, typename Step>
inline void for_value_pairs(const KVView<C>& kv, const uint16_t* p16, const Row& row,
                            const Step& step) {
  const int64_t len = kv.len, stride = len + 1;
  for (int64_t b = 0, start = 0; start < len; ++b, start += kv.block_size) {
    const C* value = kv.v_block(b);
    const int64_t n = std::min(kv.block_size, len - start);
    for (int64_t j = 0; j < n; j += 2) {
      const bool pair = j + 1 < n;  // else row t+1 is not this sequence's: zeros, p = 0
      __m512i ul[NI], uh[NI];
      for (int i = 0; i < NI; ++i) {
        const __m512i r0 = row(value, j, i);
        const __m512i r1 = pair ? row(value, j + 1, i) : _mm512_setzero_si512();
        ul[i] = _mm512_unpacklo_epi16(r0, r1);
        uh[i] = _mm512_unpackhi_epi16(r0, r1);
      }
      for (int g = 0; g < G; ++g) {
        uint32_t pp;
        std::memcpy(&pp, p16 + g * stride + start + j, sizeof(pp));
        if (!pair) pp &= 0xFFFFu;
        step(g, _mm512_set1_epi32(static_cast<int>(pp)), ul, uh);
      }
    }
  }
}

// dst[0..32) = scale * one pair-dot accumulator pair put back in dimension order: within each
// 128-bit lane unpacklo held dims 0-3 of the lane's 8 and unpackhi dims 4-7.
inline void store_pair_sums(__m512 lo, __m512 hi, __m512 scale, float* dst) {
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29,
                                           30, 31);
  _mm512_storeu_ps(dst, _mm512_mul_ps(_mm512_permutex2var_ps(lo, first, hi), scale));
  _mm512_storeu_ps(dst + 16, _mm512_mul_ps(_mm512_permutex2var_ps(lo, second, hi), scale));
}

#if defined(__AVX512BF16__)
inline __m512bh load_bf16x32(const c10::BFloat16* p) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
}

// bf16 caches where the CPU has AVX512-BF16, head_dim = 32 * NV: q . k and p . v as dot products
// of bf16 pairs (vdpbf16ps, fp32 sums), so K and V are never widened: about a third of the
// instructions of the fp32 path, which is what bounds it once K/V are in cache. The products
// are exact; p is rounded to bf16 for p . v, as flash-attention kernels do.
template <int NV, int G>
void attend_group_bf16(const float* q, const KVView<c10::BFloat16>& kv, float scale,
                       float* scores, c10::BFloat16* probs, float* acc) {
  using T = c10::BFloat16;
  constexpr int64_t D = 32 * NV;
  __m512bh qv[G][NV];  // q came from bf16: exact again in bf16
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i)
      qv[g][i] = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(q + g * D + 32 * i + 16),
                                     _mm512_loadu_ps(q + g * D + 32 * i));
  auto dot = [&](int g, const T* row) {
    __m512 s = _mm512_dpbf16_ps(_mm512_setzero_ps(), qv[g][0], load_bf16x32(row));
    for (int i = 1; i < NV; ++i) s = _mm512_dpbf16_ps(s, qv[g][i], load_bf16x32(row + 32 * i));
    return s;
  };
  __m512 mxv[G];
  score_keys<T, G>(dot, kv, D, scale, scores, mxv);
  const int64_t len = kv.len;
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum);
  const int64_t stride = len + 1;  // probs row stride: a pair may start at the last token
  for (int g = 0; g < G; ++g)
    for (int64_t t = 0; t < len; t += 16) {
      const int64_t m = std::min<int64_t>(16, len - t);
      const __mmask16 valid = static_cast<__mmask16>((1u << m) - 1);
      const __m256bh p = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(valid, scores + g * len + t));
      _mm256_mask_storeu_epi16(probs + g * stride + t, valid, reinterpret_cast<__m256i>(p));
    }
  // p . v two value rows at a time (for_value_pairs), p rounded to bf16.
  __m512 lo[G][NV], hi[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) lo[g][i] = hi[g][i] = _mm512_setzero_ps();
  auto row = [](const T* value, int64_t r, int i) {
    return _mm512_loadu_si512(value + r * D + 32 * i);
  };
  auto step = [&](int g, __m512i pv, const __m512i* ul, const __m512i* uh) {
    const __m512bh p = reinterpret_cast<__m512bh>(pv);
    for (int i = 0; i < NV; ++i) {
      lo[g][i] = _mm512_dpbf16_ps(lo[g][i], p, reinterpret_cast<__m512bh>(ul[i]));
      hi[g][i] = _mm512_dpbf16_ps(hi[g][i], p, reinterpret_cast<__m512bh>(uh[i]));
    }
  };
  for_value_pairs<G, NV>(kv, reinterpret_cast<const uint16_t*>(probs), row, step);
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i)
      store_pair_sums(lo[g][i], hi[g][i], _mm512_set1_ps(inv_sum[g]), acc + g * D + 32 * i);
}
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// int8 caches, head_dim = 64 * NV: half the bytes of bf16 to hold and to read (a decode step over
// many sequences reads a lot of them). The query is quantized per head like the keys (as
// llama.cpp's q8_0 path quantizes it), so q . k is a sum of int8 products, 64 per vpdpbusd (16
// keys x 4 inputs, on the transposed keys), taken back to fp32 with both scales; p . v sums
// int16 products too (vpdpwssd), values widened to int16 once per row for all G heads and
// probabilities in fixed point (below). (The first version widened values to fp32: 2.3x the
// value pass, and no faster than bf16 though it reads half the bytes; the keys were rows, each
// 16 keys' sums needing a horizontal sum per head and one more for the +128 bias.)
template <int NV, int G>
void attend_group_int8(const float* q, const KVView<int8_t>& kv, float scale, float* scores,
                       c10::BFloat16* probs, float* acc) {
  constexpr int64_t D = 64 * NV;
  constexpr int NF = D / 16;  // fp32 vectors per row
  const int64_t len = kv.len, block_size = kv.block_size;
  // Each query head rounded to int8 like a key row, its 4-byte groups broadcast against the
  // transposed keys (see int8_key_at): sum over d of (k + 128) q = k . q + 128 sum(q).
  alignas(64) int8_t qb[G][D];
  __m512i q_bias[G];
  float q_scale[G];
  for (int g = 0; g < G; ++g) {
    __m512 amax = _mm512_setzero_ps();
    for (int i = 0; i < NF; ++i)
      amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_loadu_ps(q + g * D + 16 * i)));
    const float s = _mm512_reduce_max_ps(amax) / 127.f;
    q_scale[g] = s * scale;
    const __m512 inv = _mm512_set1_ps(s > 0.f ? 1.f / s : 0.f);
    __m512i sum = _mm512_setzero_si512();
    for (int i = 0; i < NF; ++i) {
      const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(q + g * D + 16 * i), inv);
      const __m512i xi = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm_store_si128(reinterpret_cast<__m128i*>(qb[g] + 16 * i), _mm512_cvtsepi32_epi8(xi));
      sum = _mm512_add_epi32(sum, xi);
    }
    q_bias[g] = _mm512_set1_epi32(128 * _mm512_reduce_add_epi32(sum));
  }
  auto chunk = [&](const int8_t* /*rows*/, int64_t m, int64_t b, int64_t c, __m512* sc) {
    const __mmask16 valid = static_cast<__mmask16>((1u << m) - 1);
    const __mmask64 bytes = m == 16 ? ~__mmask64(0) : (__mmask64(1) << (4 * m)) - 1;
    const __m512 k_scale = _mm512_maskz_loadu_ps(valid, kv.k_scales(b) + c);
    const int8_t* keys = kv.k_block(b) + c * 4;
    __m512i sums[G];
    for (int g = 0; g < G; ++g) sums[g] = _mm512_setzero_si512();
    for (int64_t i = 0; i < D / 4; ++i) {
      const __m512i k4 = _mm512_maskz_loadu_epi8(bytes, keys + i * block_size * 4);
      for (int g = 0; g < G; ++g) {
        int32_t four;
        std::memcpy(&four, qb[g] + 4 * i, sizeof(four));
        sums[g] = _mm512_dpbusd_epi32(sums[g], k4, _mm512_set1_epi32(four));
      }
    }
    for (int g = 0; g < G; ++g)
      sc[g] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sums[g], q_bias[g])),
                            _mm512_mul_ps(k_scale, _mm512_set1_ps(q_scale[g])));
  };
  __m512 mxv[G];
  score_chunks<int8_t, G>(chunk, kv, D, scores, mxv);
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum);
  // p . v in int16 x int16 products (vpdpwssd): each probability times its row's scale, in
  // fixed point: the largest such product of the head maps to 32767 unless the products' sum
  // would then pass kFixedSum, which keeps the int32 sums below 127 * (kFixedSum + len / 2) <
  // 2^31 for any len under 1.8M (a flat attention over 4,000 keys still gets 4,000 steps each).
  constexpr float kFixedSum = 16e6f;
  const int64_t stride = len + 1;  // probs row stride: a pair may start at the last token
  auto* fixed = reinterpret_cast<int16_t*>(probs);
  float from_fixed[G];
  for (int g = 0; g < G; ++g) {
    float* p = scores + g * len;
    __m512 p_max = _mm512_setzero_ps(), p_sum = _mm512_setzero_ps();
    for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
      const float* row_scales = kv.v_scales(b);
      for (int64_t c = 0, n = std::min(block_size, len - start); c < n; c += 16) {
        const __mmask16 valid = static_cast<__mmask16>((1u << std::min<int64_t>(16, n - c)) - 1);
        const __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, p + start + c),
                                       _mm512_maskz_loadu_ps(valid, row_scales + c));
        _mm512_mask_storeu_ps(p + start + c, valid, x);
        p_max = _mm512_max_ps(p_max, x);
        p_sum = _mm512_add_ps(p_sum, x);
      }
    }
    const float top = _mm512_reduce_max_ps(p_max), sum = _mm512_reduce_add_ps(p_sum);
    const float scale_fixed = top > 0.f ? std::min(32767.f / top, kFixedSum / sum) : 0.f;
    const __m512 to_fixed = _mm512_set1_ps(scale_fixed);
    from_fixed[g] = top > 0.f ? inv_sum[g] / scale_fixed : 0.f;
    for (int64_t t = 0; t < len; t += 16) {
      const __mmask16 valid = static_cast<__mmask16>((1u << std::min<int64_t>(16, len - t)) - 1);
      const __m512i x = _mm512_cvt_roundps_epi32(
          _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, p + t), to_fixed),
          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm256_mask_storeu_epi16(fixed + g * stride + t, valid, _mm512_cvtepi32_epi16(x));
    }
  }
  // Then two value rows at a time (for_value_pairs), widened to int16.
  constexpr int NI = D / 32;  // int16 vectors per row
  __m512i lo[G][NI], hi[G][NI];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NI; ++i) lo[g][i] = hi[g][i] = _mm512_setzero_si512();
  auto row = [](const int8_t* value, int64_t r, int i) {
    return _mm512_cvtepi8_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(value + r * D + 32 * i)));
  };
  auto step = [&](int g, __m512i pv, const __m512i* ul, const __m512i* uh) {
    for (int i = 0; i < NI; ++i) {
      lo[g][i] = _mm512_dpwssd_epi32(lo[g][i], ul[i], pv);
      hi[g][i] = _mm512_dpwssd_epi32(hi[g][i], uh[i], pv);
    }
  };
  for_value_pairs<G, NI>(kv, reinterpret_cast<const uint16_t*>(fixed), row, step);
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NI; ++i)
      store_pair_sums(_mm512_cvtepi32_ps(lo[g][i]), _mm512_cvtepi32_ps(hi[g][i]),
                      _mm512_set1_ps(from_fixed[g]), acc + g * D + 32 * i);
}

// Up to 6 * 2 * 2 accumulators for head_dim 64 (3 * 4 * 2 for 128): in registers with the rows.
template <int NV>
GroupFn<int8_t> int8_group_kernel_for(int64_t group) {
  switch (group) {
    case 1: return attend_group_int8<NV, 1>;
    case 2: return attend_group_int8<NV, 2>;
    case 3: return attend_group_int8<NV, 3>;
    case 4: return NV == 1 ? attend_group_int8<NV, 4> : nullptr;
    case 5: return NV == 1 ? attend_group_int8<NV, 5> : nullptr;
    case 6: return NV == 1 ? attend_group_int8<NV, 6> : nullptr;
    default: return nullptr;
  }
}
#endif

// The vectorised group kernel for this (head_dim, group), or nullptr where there is none.
template <typename T, int NV>
GroupFn<T> group_kernel_for(int64_t group) {
  switch (group) {
    case 1: return attend_group_avx512<T, NV, 1>;
    case 2: return attend_group_avx512<T, NV, 2>;
    case 3: return attend_group_avx512<T, NV, 3>;
    case 4: return attend_group_avx512<T, NV, 4>;
    case 5: return attend_group_avx512<T, NV, 5>;
    case 6: return attend_group_avx512<T, NV, 6>;
    case 7: return attend_group_avx512<T, NV, 7>;
    case 8: return attend_group_avx512<T, NV, 8>;
    default: return nullptr;
  }
}

#if defined(__AVX512BF16__)
// Up to 12 * 2 accumulators: the V pass keeps them all in the 32 vector registers.
template <int NV>
GroupFn<c10::BFloat16> bf16_group_kernel_for(int64_t group) {
  switch (group) {
    case 1: return attend_group_bf16<NV, 1>;
    case 2: return attend_group_bf16<NV, 2>;
    case 3: return attend_group_bf16<NV, 3>;
    case 4: return attend_group_bf16<NV, 4>;
    case 5: return NV <= 2 ? attend_group_bf16<NV, 5> : nullptr;
    case 6: return NV <= 2 ? attend_group_bf16<NV, 6> : nullptr;
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
#endif

#if !defined(__AVX512F__) && defined(ROSEINFER_VECF)
// AVX2 (8 lanes, 16 registers): the float kernel of attend_group_avx512, for head_dim = 8 * NV.
// Queries stay in L1 rather than registers, and the value pass runs one query head at a time,
// its NV accumulators in registers.

// Lane j of the result is the sum of v[j]'s 8 lanes.
inline __m256 hsum8(const __m256* v) {
  const __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  // a = [sums of v0..v3's low halves | of their high halves]; b the same for v4..v7.
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

template <typename T, int NV, int G>
void attend_group_avx2(const float* q, const KVView<T>& kv, float scale, float* scores,
                       c10::BFloat16* /*probs*/, float* acc) {
  constexpr int64_t D = 8 * NV;
  const int64_t len = kv.len, block_size = kv.block_size;
  const __m256 scalev = _mm256_set1_ps(scale);
  __m256 mxv[G];
  for (int g = 0; g < G; ++g) mxv[g] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  // Scores, 8 keys at a time: 8 dot-product vectors summed across lanes together (hsum8).
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    const T* block = kv.k_block(b);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t c = 0; c < n; c += 8) {
      const int64_t m = std::min<int64_t>(8, n - c);
      const T* key = block + c * D;
      for (int g = 0; g < G; ++g) {
        const float* qg = q + g * D;
        __m256 dots[8];
        for (int j = 0; j < 8; ++j) {
          dots[j] = _mm256_setzero_ps();
          if (j < m)
            for (int i = 0; i < NV; ++i)
              dots[j] = _mm256_fmadd_ps(_mm256_loadu_ps(qg + 8 * i), vec_load(key + j * D + 8 * i),
                                        dots[j]);
        }
        const __m256 sc = _mm256_mul_ps(hsum8(dots), scalev);
        alignas(32) float out[8];
        _mm256_store_ps(out, sc);
        std::copy_n(out, m, scores + g * len + start + c);
        // Lanes past m hold 0 * scale: kept out of the max by their -inf.
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(m)), lane));
        mxv[g] = _mm256_max_ps(mxv[g], _mm256_blendv_ps(mxv[g], sc, valid));
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    float* sc = scores + g * len;
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, mxv[g]);
    const float mx = *std::max_element(lanes, lanes + 8);
    const __m256 mxb = _mm256_set1_ps(mx);
    __m256 sumv = _mm256_setzero_ps();
    int64_t t = 0;
    for (; t + 8 <= len; t += 8) {
      const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(sc + t), mxb));
      _mm256_storeu_ps(sc + t, e);
      sumv = _mm256_add_ps(sumv, e);
    }
    float sum = vec_sum(sumv);
    for (; t < len; ++t) sum += (sc[t] = std::exp(sc[t] - mx));
    // The value pass: this head's NV accumulators in registers, p = e / sum.
    const float inv = 1.f / sum;
    __m256 av[NV];
    for (int i = 0; i < NV; ++i) av[i] = _mm256_setzero_ps();
    for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
      const T* value = kv.v_block(b);
      const int64_t n = std::min(block_size, len - start);
      for (int64_t j = 0; j < n; ++j, value += D) {
        const __m256 p = _mm256_set1_ps(sc[start + j]);
        for (int i = 0; i < NV; ++i) av[i] = _mm256_fmadd_ps(p, vec_load(value + 8 * i), av[i]);
      }
    }
    const __m256 invv = _mm256_set1_ps(inv);
    for (int i = 0; i < NV; ++i) _mm256_storeu_ps(acc + g * D + 8 * i, _mm256_mul_ps(av[i], invv));
  }
}

// The AVX2 kernel for this (head_dim, group), or nullptr where there is none.
template <typename C>
GroupFn<C> group_kernel(int64_t head_dim, int64_t group) {
  if constexpr (std::is_same_v<C, int8_t>) {
    return nullptr;
  } else {
    auto for_dim = [&](auto nv) -> GroupFn<C> {
      constexpr int NV = decltype(nv)::value;
      switch (group) {
        case 1: return attend_group_avx2<C, NV, 1>;
        case 2: return attend_group_avx2<C, NV, 2>;
        case 3: return attend_group_avx2<C, NV, 3>;
        case 4: return attend_group_avx2<C, NV, 4>;
        case 5: return attend_group_avx2<C, NV, 5>;
        case 6: return attend_group_avx2<C, NV, 6>;
        case 7: return attend_group_avx2<C, NV, 7>;
        case 8: return attend_group_avx2<C, NV, 8>;
        default: return nullptr;
      }
    };
    if (head_dim == 64) return for_dim(std::integral_constant<int, 8>{});
    if (head_dim == 128) return for_dim(std::integral_constant<int, 16>{});
    return nullptr;
  }
}
#endif

// Task boundaries [parts + 1] splitting the (sequence, KV head) tasks into `parts` runs of
// about equal work, a task costing its sequence's keys plus a fixed overhead. An even split by
// task count can give one thread most of the keys when the batch's lengths differ (half of 32
// sequences at 400 keys, half at 50: a step's attention 11.3 -> 7.4 ms with the int8 cache,
// benchmarks/decode_attention.py's "mixed lengths").
std::vector<int64_t> balanced_ranges(const int64_t* lens, int64_t num_seqs, int64_t num_kv_heads,
                                     int64_t parts) {
  constexpr int64_t kTaskOverhead = 16;  // keys' worth of per-task work (q, softmax, output)
  parts = std::max<int64_t>(1, std::min(parts, num_seqs * num_kv_heads));
  int64_t total = 0;
  for (int64_t s = 0; s < num_seqs; ++s) total += lens[s] + kTaskOverhead;
  total *= num_kv_heads;
  std::vector<int64_t> bounds{0};
  int64_t done = 0;
  for (int64_t task = 0; task < num_seqs * num_kv_heads; ++task) {
    const int64_t work = lens[task / num_kv_heads] + kTaskOverhead;
    done += work;
    // A part ends after the task whose midpoint reaches the part's share of the work.
    while (int64_t(bounds.size()) < parts &&
           (2 * done - work) * parts >= 2 * int64_t(bounds.size()) * total)
      bounds.push_back(task + 1);
  }
  while (int64_t(bounds.size()) <= parts) bounds.push_back(num_seqs * num_kv_heads);
  return bounds;
}

// T: the dtype of q, k, v and the output; C: the cache's (T, or int8_t with scales).
template <typename T, typename C>
void decode_kernel(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   torch::Tensor& k_cache, torch::Tensor& v_cache, float* k_scales,
                   float* v_scales, const torch::Tensor& slot_mapping,
                   const torch::Tensor& block_tables, const torch::Tensor& context_lens,
                   double scale, torch::Tensor& out) {
  const int64_t num_seqs = q.size(0), num_heads = q.size(1), head_dim = q.size(2);
  const int64_t num_kv_heads = k_cache.size(1), block_size = k_cache.size(2);
  const int64_t group = num_heads / num_kv_heads;
  const float fscale = static_cast<float>(scale);
  const int64_t max_blocks = block_tables.size(1);
  const int64_t head_stride = block_size * head_dim;      // one KV head's rows of a block
  const int64_t block_stride = num_kv_heads * head_stride;  // one block, all heads
  const int64_t scale_stride = num_kv_heads * block_size;   // one block's scales
  const T* qp = q.data_ptr<T>();
  C* kc = k_cache.data_ptr<C>();
  C* vc = v_cache.data_ptr<C>();
  T* op = out.data_ptr<T>();
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  const int64_t* lens = context_lens.data_ptr<int64_t>();

  // The new token's K/V go into the cache first: each sequence attends to itself too (and a
  // prompt's tokens, when a step's chunks come through here, to each other's). In parallel: at
  // batch 32 the int8 rows took ~15 µs per layer on one thread while the other waited.
  const T* kp = k.data_ptr<T>();
  const T* vp = v.data_ptr<T>();
  const int64_t* slots = slot_mapping.data_ptr<int64_t>();
  const int64_t k_seq = k.stride(0), v_seq = v.stride(0);
  at::parallel_for(0, num_seqs * num_kv_heads, 16, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t s = w / num_kv_heads, h = w % num_kv_heads;
      const int64_t block = slots[s] / block_size, offset = slots[s] % block_size;
      const int64_t at = block * block_stride + offset * head_dim;
      const T* k_row = kp + s * k_seq + h * head_dim;
      const T* v_row = vp + s * v_seq + h * head_dim;
      if constexpr (std::is_same_v<C, int8_t>) {
        const int64_t scale_at = block * scale_stride + h * block_size + offset;
        int8_t row[512];  // head_dim <= 512: checked by the caller
        quantize_row(k_row, head_dim, row, k_scales + scale_at);
        int8_t* k_block = kc + block * block_stride + h * head_stride;
        for (int64_t d = 0; d < head_dim; ++d)
          k_block[int8_key_at(offset, d, block_size)] = static_cast<int8_t>(row[d] ^ 0x80);
        quantize_row(v_row, head_dim, vc + at + h * head_stride, v_scales + scale_at);
      } else {
        std::copy_n(k_row, head_dim, kc + at + h * head_stride);
        std::copy_n(v_row, head_dim, vc + at + h * head_stride);
      }
    }
  });

  int64_t max_len = 0;
  for (int64_t s = 0; s < num_seqs; ++s) max_len = std::max(max_len, lens[s]);
  GroupFn<C> vectorised = nullptr;
#if defined(ROSEINFER_VECF)
  vectorised = group_kernel<C>(head_dim, group);
#endif
  auto view = [&](int64_t task) {
    const int64_t s = task / num_kv_heads, kvh = task % num_kv_heads;
    const bool scaled = k_scales != nullptr;
    return KVView<C>{kc + kvh * head_stride,
                     vc + kvh * head_stride,
                     scaled ? k_scales + kvh * block_size : nullptr,
                     scaled ? v_scales + kvh * block_size : nullptr,
                     tables + s * max_blocks,
                     lens[s],
                     block_size,
                     block_stride,
                     scale_stride};
  };
  // The first blocks of a task's K/V, asked for while the task before it runs: tasks are short
  // (a few blocks each), so waiting for their first blocks would be a large share of them.
  auto prefetch_start = [&](int64_t task) {
#if defined(__AVX512F__)
    const KVView<C> kv = view(task);
    for (int64_t b = 0; b < kPrefetchBlocks; ++b)
      prefetch_kv_block(kv, b, head_dim * int64_t(sizeof(C)));
#endif
  };
  // One task per (sequence, KV head), covering the query heads of its group.
  auto run_tasks = [&](int64_t begin, int64_t end) {
    std::vector<float> qf(group * head_dim), acc(group * head_dim), scores(group * max_len);
    std::vector<c10::BFloat16> probs(group * (max_len + 1));
    prefetch_start(begin);
    for (int64_t task = begin; task < end; ++task) {
      if (task + 1 < end) prefetch_start(task + 1);
      const int64_t s = task / num_kv_heads, kvh = task % num_kv_heads;
      for (int64_t g = 0; g < group; ++g) {
        const T* src = qp + s * q.stride(0) + (kvh * group + g) * q.stride(1);
        for (int64_t d = 0; d < head_dim; ++d)
          qf[g * head_dim + d] = to_float(src[d]);
      }
      const KVView<C> kv = view(task);
      if (vectorised != nullptr) {
        vectorised(qf.data(), kv, fscale, scores.data(), probs.data(), acc.data());
      } else {
        for (int64_t g = 0; g < group; ++g)
          attend_head_scalar<C>(&qf[g * head_dim], kv, head_dim, fscale, scores.data(),
                                &acc[g * head_dim]);
      }
      for (int64_t g = 0; g < group; ++g) {
        T* dst = op + s * out.stride(0) + (kvh * group + g) * out.stride(1);
        for (int64_t d = 0; d < head_dim; ++d) dst[d] = static_cast<T>(acc[g * head_dim + d]);
      }
    }
  };
  // Each thread gets one run of tasks holding about the same number of keys.
  const std::vector<int64_t> bounds =
      balanced_ranges(lens, num_seqs, num_kv_heads, at::get_num_threads());
  at::parallel_for(0, int64_t(bounds.size()) - 1, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      if (bounds[r] < bounds[r + 1]) run_tasks(bounds[r], bounds[r + 1]);
  });
}

}  // namespace

torch::Tensor paged_decode_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                                     torch::Tensor k_cache, torch::Tensor v_cache,
                                     torch::Tensor slot_mapping, torch::Tensor block_tables,
                                     torch::Tensor context_lens, double scale,
                                     c10::optional<torch::Tensor> k_scale,
                                     c10::optional<torch::Tensor> v_scale) {
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, "q, k, v must be [B, heads, D]");
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.sizes() == v_cache.sizes(),
              "the caches must be [num_blocks, kv_heads, block_size, head_dim], both alike");
  TORCH_CHECK(k_cache.size(1) == k.size(1) && k_cache.size(3) == q.size(2) &&
                  k.sizes() == v.sizes() && k.size(0) == q.size(0),
              "q, k, v and the caches disagree on heads or head_dim");
  TORCH_CHECK(q.stride(2) == 1 && k.stride(2) == 1 && v.stride(2) == 1,
              "q, k, v must have contiguous head_dim");
  TORCH_CHECK(k.stride(1) == k.size(2) && v.stride(1) == v.size(2),
              "k and v heads must be contiguous");
  TORCH_CHECK(k_cache.is_contiguous() && v_cache.is_contiguous(), "caches must be contiguous");
  TORCH_CHECK(k_cache.scalar_type() == v_cache.scalar_type(), "the caches must share a dtype");
  const bool int8_cache = k_cache.scalar_type() == at::kChar;
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type() &&
                  (int8_cache || k_cache.scalar_type() == q.scalar_type()),
              "q, k, v and the cache must share a dtype (or the cache be int8)");
  TORCH_CHECK(int8_cache == (k_scale.has_value() && v_scale.has_value()),
              "an int8 cache comes with k_scale and v_scale, other caches without");
  if (int8_cache) {
    const auto rows = k_cache.sizes().slice(0, 3);  // [num_blocks, kv_heads, block_size]
    TORCH_CHECK(k_scale->sizes() == rows && v_scale->sizes() == rows &&
                    k_scale->scalar_type() == at::kFloat && v_scale->scalar_type() == at::kFloat &&
                    k_scale->is_contiguous() && v_scale->is_contiguous(),
                "k_scale and v_scale must be contiguous fp32 [num_blocks, kv_heads, block_size]");
    TORCH_CHECK(q.size(2) % 4 == 0 && q.size(2) <= 512,
                "an int8 cache needs head_dim a multiple of 4, at most 512 (its keys are stored "
                "in groups of 4)");
  }
  TORCH_CHECK(q.size(1) % k_cache.size(1) == 0, "query heads must be a multiple of kv heads");
  TORCH_CHECK(block_tables.scalar_type() == at::kLong && slot_mapping.scalar_type() == at::kLong &&
                  context_lens.scalar_type() == at::kLong,
              "index tensors must be int64");
  TORCH_CHECK(block_tables.is_contiguous() && slot_mapping.is_contiguous() &&
                  context_lens.is_contiguous(),
              "index tensors must be contiguous");
  auto out = torch::empty({q.size(0), q.size(1), q.size(2)}, q.options());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (int8_cache)
      decode_kernel<T, int8_t>(q, k, v, k_cache, v_cache, k_scale->data_ptr<float>(),
                               v_scale->data_ptr<float>(), slot_mapping, block_tables,
                               context_lens, scale, out);
    else
      decode_kernel<T, T>(q, k, v, k_cache, v_cache, nullptr, nullptr, slot_mapping,
                          block_tables, context_lens, scale, out);
  };
  dispatch(q.scalar_type(), "paged_decode_attention", run);
  return out;
}

}  // namespace roseinfer
