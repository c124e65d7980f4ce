// Decode attention with AVX-512 (16 lanes, 32 registers): the helpers every AVX-512 kernel
// shares, and the float kernel for any storage type (fp32 FMAs on widened rows). Included by
// `paged_attention.cpp` only (through `attention_amx.h`); the bf16 and int8 caches' kernels are
// in `attention_avx512_pairs.h`, their AMX forms and the kernel choice in `attention_amx.h`.
#pragma once

#include <algorithm>
#include <limits>
#include <type_traits>

#include "attention_kv.h"

#if defined(__AVX512F__)
namespace roseinfer::attention {

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
// place and returns 1 / (the row's sum) in inv_sum, the max and the sum in row_stats [G, 2];
// `mxv` holds each row's running max lanes.
template <int G>
inline void softmax_numerators(float* scores, int64_t len, const __m512* mxv, float* inv_sum,
                               float* row_stats) {
  for (int g = 0; g < G; ++g) {
    float* sc = scores + g * len;
    const float row_max = _mm512_reduce_max_ps(mxv[g]);
    const __m512 mx = _mm512_set1_ps(row_max);
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
    const float sum = _mm512_reduce_add_ps(sumv);
    inv_sum[g] = 1.f / sum;
    row_stats[2 * g] = row_max;
    row_stats[2 * g + 1] = sum;
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
    prefetch_k_block(kv, b + kPrefetchBlocks, D * int64_t(sizeof(T)));
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
                         c10::BFloat16* /*probs*/, float* acc, float* row_stats) {
  constexpr int64_t D = 16 * NV;
  __m512 qv[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) qv[g][i] = _mm512_loadu_ps(q + (g * NV + i) * 16);
  auto dot = [&](int g, const T* row) { return dot_row<T, NV>(qv[g], row); };
  __m512 mxv[G];
  score_keys<T, G>(dot, kv, D, scale, scores, mxv);
  prefetch_v_start(kv, D * int64_t(sizeof(T)));
  const int64_t len = kv.len, block_size = kv.block_size;
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum, row_stats);
  __m512 av[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) av[g][i] = _mm512_setzero_ps();
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_v_block(kv, b + kValueBlocksAhead<T>, D * int64_t(sizeof(T)));
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

}  // namespace roseinfer::attention
#endif
