// Decode attention over bf16 and int8 caches with AVX-512: products of 16-bit pairs
// (vdpbf16ps, vpdpwssd) and of bytes (vpdpbusd), so the rows are never widened to fp32.
// `attention_amx.h` builds its AMX kernels on these and picks the kernel for a cache.
#pragma once

#include <cstring>

#include "attention_avx512.h"

#if defined(__AVX512F__)
namespace roseinfer::attention {

// Value rows two at a time, for the pair dot products (vdpbf16ps, vpdpwssd): rows t and t+1
// (zeros past a block's last row) unpacked as 16-bit elements give, per 32-bit lane, the pair
// (v[t][d], v[t+1][d]) to multiply with (p[t], p[t+1]), `p16` being the task's 16-bit
// probabilities [G, len + 1]. row(value, r, i): elements 32i.. of row r as 32 16-bit lanes;
// step(g, pv, ul, uh): head g's pair of probabilities (broadcast) and the unpacked rows. The
// first blocks were asked for as the score pass ended (prefetch_v_start).
template <int G, int NI, typename C, typename Row, typename Step>
inline void for_value_pairs(const KVView<C>& kv, const uint16_t* p16, const Row& row,
                            const Step& step) {
  const int64_t len = kv.len, stride = len + 1;
  constexpr int64_t kRowBytes = 32 * NI * int64_t(sizeof(C));  // NI vectors of 32 16-bit lanes
  for (int64_t b = 0, start = 0; start < len; ++b, start += kv.block_size) {
    prefetch_v_block(kv, b + kValueBlocksAhead<C>, kRowBytes);
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

// The value passes' start: the first value blocks asked for, each head's softmax numerators
// (into inv_sum and row_stats as softmax_numerators) rounded to bf16 into probs [G, len + 1] (row
// stride len + 1: a pair may start at the last token).
template <int NV, int G>
inline void bf16_probabilities(const KVView<c10::BFloat16>& kv, float* scores, const __m512* mxv,
                               c10::BFloat16* probs, float* inv_sum, float* row_stats) {
  prefetch_v_start(kv, 64 * NV);
  const int64_t len = kv.len, stride = len + 1;
  softmax_numerators<G>(scores, len, mxv, inv_sum, row_stats);
  for (int g = 0; g < G; ++g)
    for (int64_t t = 0; t < len; t += 16) {
      const int64_t m = std::min<int64_t>(16, len - t);
      const __mmask16 valid = static_cast<__mmask16>((1u << m) - 1);
      const __m256bh p = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(valid, scores + g * len + t));
      _mm256_mask_storeu_epi16(probs + g * stride + t, valid, reinterpret_cast<__m256i>(p));
    }
}

// bf16 caches where the CPU has AVX512-BF16, head_dim = 32 * NV: from the scores (scaled, each
// head's max lanes in mxv) on, p . v as dot products of bf16 pairs (vdpbf16ps, fp32 sums), so V is
// never widened; p is rounded to bf16 for it, as flash-attention kernels do.
template <int NV, int G>
void attend_values_bf16(const KVView<c10::BFloat16>& kv, float* scores, const __m512* mxv,
                        c10::BFloat16* probs, float* acc, float* row_stats) {
  using T = c10::BFloat16;
  constexpr int64_t D = 32 * NV;
  float inv_sum[G];
  bf16_probabilities<NV, G>(kv, scores, mxv, probs, inv_sum, row_stats);
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

// q . k as dot products of bf16 pairs (vdpbf16ps), so K is never widened: about a third of the
// instructions of the fp32 path, which is what bounds it once K/V are in cache. The products are
// exact.
template <int NV, int G>
inline void score_keys_bf16(const float* q, const KVView<c10::BFloat16>& kv, float scale,
                            float* scores, __m512* mxv) {
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
  score_keys<T, G>(dot, kv, D, scale, scores, mxv);
}

template <int NV, int G>
void attend_group_bf16(const float* q, const KVView<c10::BFloat16>& kv, float scale,
                       float* scores, c10::BFloat16* probs, float* acc, float* row_stats) {
  __m512 mxv[G];
  score_keys_bf16<NV, G>(q, kv, scale, scores, mxv);
  attend_values_bf16<NV, G>(kv, scores, mxv, probs, acc, row_stats);
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
                       c10::BFloat16* probs, float* acc, float* row_stats) {
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
  prefetch_v_start(kv, D);
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum, row_stats);
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

}  // namespace roseinfer::attention
#endif
