// Decode attention with AVX2 and no AVX-512 (8 lanes, 16 registers), and `group_kernel`,
// which picks it for a cache. Included by `paged_attention.cpp`.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "attention_kv.h"

#if !defined(__AVX512F__) && defined(ROSEINFER_VECF)
namespace roseinfer::attention {

// AVX2 (8 lanes, 16 registers): the float kernel of attend_group_avx512, for head_dim = 8 * NV.
// Queries stay in L1 rather than registers. The scores run 8 keys' dot products side by side
// (8 independent FMA chains, each query vector loaded once for the 8); the value pass runs all
// G heads over NW of a row's NV vectors at a time, so each value row is read once per pass for
// every head, G * NW accumulators in registers (G > 4: one head at a time, all NV vectors).

// Lane j of the result is the sum of v[j]'s 8 lanes.
inline __m256 hsum8(const __m256* v) {
  const __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  // a = [sums of v0..v3's low halves | of their high halves]; b the same for v4..v7.
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

// Turns a row of `len` scores into exp(score - max) in place, `mxv` holding the row's running
// max lanes, and returns 1 / (the row's sum); the max and the sum go to stats[0], stats[1].
inline float softmax_numerators8(float* sc, int64_t len, __m256 mxv, float* stats) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, mxv);
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
  stats[0] = mx;
  stats[1] = sum;
  return 1.f / sum;
}

// Stores the first m of 8 scores at dst and folds them into the running max lanes `mxv` (lanes
// past m hold garbage: kept out of the max).
inline void store_scores8(__m256 sc, int64_t m, float* dst, __m256& mxv) {
  if (m == 8) {
    _mm256_storeu_ps(dst, sc);
    mxv = _mm256_max_ps(mxv, sc);
    return;
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(m)), lane);
  _mm256_maskstore_ps(dst, valid, sc);
  mxv = _mm256_max_ps(mxv, _mm256_blendv_ps(mxv, sc, _mm256_castsi256_ps(valid)));
}

template <typename T, int NV, int G>
void attend_group_avx2(const float* q, const KVView<T>& kv, float scale, float* scores,
                       c10::BFloat16* /*probs*/, float* acc, float* row_stats) {
  constexpr int64_t D = 8 * NV;
  const int64_t len = kv.len, block_size = kv.block_size;
  const __m256 scalev = _mm256_set1_ps(scale);
  __m256 mxv[G];
  for (int g = 0; g < G; ++g) mxv[g] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  // bf16/fp16 keys shared by several heads are widened once into L1 rather than once per head:
  // each widening is two instructions per FMA (a load-and-extend and a shift for bf16).
  constexpr bool kWiden = !std::is_same_v<T, float> && G > 1;
  using K = std::conditional_t<kWiden, float, T>;
  alignas(32) float widened[kWiden ? 8 * D : 1];
  // Scores, 8 keys at a time: 8 dot-product vectors summed across lanes together (hsum8).
  // The first blocks were asked for by the caller, during the previous task.
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_kv_block(kv, b + kPrefetchBlocks, D * int64_t(sizeof(T)));
    const T* block = kv.k_block(b);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t c = 0; c < n; c += 8) {
      const int64_t m = std::min<int64_t>(8, n - c);
      const K* keys = nullptr;
      if constexpr (kWiden) {
        for (int64_t e = 0; e < m * D; e += 8)
          _mm256_store_ps(widened + e, vec_load(block + c * D + e));
        keys = widened;
      } else {
        keys = block + c * D;
      }
      // Keys past m (the block's end) repeat key m - 1: their lanes never leave store_scores8.
      const K* key[8];
      for (int j = 0; j < 8; ++j) key[j] = keys + std::min<int64_t>(j, m - 1) * D;
      for (int g = 0; g < G; ++g) {
        // Otherwise GCC hoists the 8 * NV key loads, the same for every head, out of this loop
        // and spills them to the stack; each FMA loading its key from L1 is cheaper.
        asm volatile("" : : : "memory");
        const float* qg = q + g * D;
        __m256 dots[8];
        for (int j = 0; j < 8; ++j) dots[j] = _mm256_setzero_ps();
        for (int i = 0; i < NV; ++i) {
          const __m256 qv = _mm256_loadu_ps(qg + 8 * i);
          for (int j = 0; j < 8; ++j)
            dots[j] = _mm256_fmadd_ps(qv, vec_load(key[j] + 8 * i), dots[j]);
        }
        const __m256 sc = _mm256_mul_ps(hsum8(dots), scalev);
        store_scores8(sc, m, scores + g * len + start + c, mxv[g]);
      }
    }
  }
  float inv[G];
  for (int g = 0; g < G; ++g)
    inv[g] = softmax_numerators8(scores + g * len, len, mxv[g], row_stats + 2 * g);
  // The value pass: p = e / sum, the sum applied once at the end.
  constexpr int kHeads = G <= 4 ? G : 1;  // heads per pass
  constexpr int NW = kHeads == 1 ? NV : (kHeads <= 3 ? 4 : 2);  // kHeads * (NW + 1) < 16
  for (int g0 = 0; g0 < G; g0 += kHeads)
    for (int w = 0; w < NV; w += NW) {
      __m256 av[kHeads][NW];
      for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < NW; ++i) av[h][i] = _mm256_setzero_ps();
      for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
        const T* value = kv.v_block(b) + 8 * w;
        const int64_t n = std::min(block_size, len - start);
        for (int64_t j = 0; j < n; ++j, value += D) {
          // The row's part for the next pass, on its way to L2: cold rows would otherwise come
          // from memory once per pass, in strided sweeps the hardware prefetchers follow badly.
          if (w + NW < NV)
            for (int64_t at = 0; at < NW * 8 * int64_t(sizeof(T)); at += 64)
              _mm_prefetch(reinterpret_cast<const char*>(value + 8 * NW) + at, _MM_HINT_T1);
          __m256 p[kHeads];
          for (int h = 0; h < kHeads; ++h)
            p[h] = _mm256_set1_ps(scores[(g0 + h) * len + start + j]);
          for (int i = 0; i < NW; ++i) {
            const __m256 v = vec_load(value + 8 * i);
            for (int h = 0; h < kHeads; ++h) av[h][i] = _mm256_fmadd_ps(p[h], v, av[h][i]);
          }
        }
      }
      for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < NW; ++i)
          _mm256_storeu_ps(acc + (g0 + h) * D + 8 * (w + i),
                           _mm256_mul_ps(av[h][i], _mm256_set1_ps(inv[g0 + h])));
    }
}

// int8 caches, head_dim = 8 * NV (the transposed keys of attention_kv.h): the scores as the
// AVX-512 kernel (attend_group_int8) computes them, bit for bit, without VNNI. The query is
// rounded to int8 per head the same way and kept as int16; 8 keys' next 4 input bytes (one
// 32-byte load) widen to int16, and vpmaddwd multiplies 4 keys' pairs at a time by the
// broadcast query pairs into int32 sums, two per key, added across lanes once per 8 keys. The
// value pass widens rows to fp32: p (times the row's scale) . v for all G heads at once, NW of
// the NV vectors of a row per pass so the G * NW accumulators stay in the 16 registers.
template <int NV, int G>
void attend_group_int8_avx2(const float* q, const KVView<int8_t>& kv, float scale,
                            float* scores, c10::BFloat16* /*probs*/, float* acc,
                            float* row_stats) {
  constexpr int64_t D = 8 * NV;
  constexpr int NW = G == 1 ? NV : (G <= 3 ? 4 : 2);  // G * (NW + 1) + 1 <= 16 registers
  const int64_t len = kv.len, block_size = kv.block_size;
  alignas(32) int16_t qi[G][D];
  int32_t q_bias[G];
  float q_scale[G];
  for (int g = 0; g < G; ++g) {
    __m256 amax = _mm256_setzero_ps();
    const __m256 sign = _mm256_set1_ps(-0.f);
    for (int i = 0; i < NV; ++i)
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(q + g * D + 8 * i)));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, amax);
    const float s = *std::max_element(lanes, lanes + 8) / 127.f;
    q_scale[g] = s * scale;
    const __m256 inv = _mm256_set1_ps(s > 0.f ? 1.f / s : 0.f);
    __m256i sum = _mm256_setzero_si256();
    for (int i = 0; i < NV; ++i) {
      // Rounded to nearest even, as the AVX-512 kernel's _MM_FROUND_TO_NEAREST_INT; within
      // [-127, 127] since |q| <= 127 s.
      const __m256i x = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(q + g * D + 8 * i), inv));
      sum = _mm256_add_epi32(sum, x);
      const __m128i x16 = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
      _mm_store_si128(reinterpret_cast<__m128i*>(qi[g] + 8 * i), x16);
    }
    alignas(32) int32_t parts[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(parts), sum);
    int32_t total = 0;
    for (int32_t x : parts) total += x;
    q_bias[g] = 128 * total;  // the keys are stored plus 128
  }
  __m256 mxv[G];
  for (int g = 0; g < G; ++g) mxv[g] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  // hadd leaves the keys as [0, 1, 4, 5 | 2, 3, 6, 7]: back into order.
  const __m256i key_order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_kv_block(kv, b + kPrefetchBlocks, D);
    const int64_t n = std::min(block_size, len - start);
    for (int64_t c = 0; c < n; c += 8) {
      const int64_t m = std::min<int64_t>(8, n - c);
      // A key's 4 bytes are one int32 lane: keys past m are not read (the block may end).
      const __m256i keys_valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(m)), lane);
      const int8_t* keys = kv.k_block(b) + c * 4;
      __m256i lo[G], hi[G];  // keys 0-3 and 4-7, two partial sums each
      for (int g = 0; g < G; ++g) lo[g] = hi[g] = _mm256_setzero_si256();
      for (int64_t i = 0; i < D / 4; ++i) {
        const int* src = reinterpret_cast<const int*>(keys + i * block_size * 4);
        const __m256i k4 = m == 8 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))
                                  : _mm256_maskload_epi32(src, keys_valid);
        const __m256i k_lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(k4));
        const __m256i k_hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(k4, 1));
        for (int g = 0; g < G; ++g) {
          int64_t four;
          std::memcpy(&four, qi[g] + 4 * i, sizeof(four));
          const __m256i qv = _mm256_set1_epi64x(four);
          lo[g] = _mm256_add_epi32(lo[g], _mm256_madd_epi16(k_lo, qv));
          hi[g] = _mm256_add_epi32(hi[g], _mm256_madd_epi16(k_hi, qv));
        }
      }
      const float* k_scales = kv.k_scales(b) + c;
      const __m256 k_scale = m == 8 ? _mm256_loadu_ps(k_scales)
                                    : _mm256_maskload_ps(k_scales, keys_valid);
      for (int g = 0; g < G; ++g) {
        const __m256i sums =
            _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(lo[g], hi[g]), key_order);
        const __m256 sc =
            _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(sums, _mm256_set1_epi32(q_bias[g]))),
                          _mm256_mul_ps(k_scale, _mm256_set1_ps(q_scale[g])));
        store_scores8(sc, m, scores + g * len + start + c, mxv[g]);
      }
    }
  }
  float inv_sum[G];
  for (int g = 0; g < G; ++g) {
    float* p = scores + g * len;
    inv_sum[g] = softmax_numerators8(p, len, mxv[g], row_stats + 2 * g);
    for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
      const float* row_scales = kv.v_scales(b);
      for (int64_t j = 0, n = std::min(block_size, len - start); j < n; ++j)
        p[start + j] *= row_scales[j];
    }
  }
  for (int w = 0; w < NV; w += NW) {
    __m256 av[G][NW];
    for (int g = 0; g < G; ++g)
      for (int i = 0; i < NW; ++i) av[g][i] = _mm256_setzero_ps();
    for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
      const int8_t* value = kv.v_block(b) + 8 * w;
      const int64_t n = std::min(block_size, len - start);
      for (int64_t j = 0; j < n; ++j, value += D) {
        __m256 p[G];
        for (int g = 0; g < G; ++g) p[g] = _mm256_set1_ps(scores[g * len + start + j]);
        for (int i = 0; i < NW; ++i) {
          const __m256 v = vec_load(value + 8 * i);
          for (int g = 0; g < G; ++g) av[g][i] = _mm256_fmadd_ps(p[g], v, av[g][i]);
        }
      }
    }
    for (int g = 0; g < G; ++g)
      for (int i = 0; i < NW; ++i)
        _mm256_storeu_ps(acc + g * D + 8 * (w + i),
                         _mm256_mul_ps(av[g][i], _mm256_set1_ps(inv_sum[g])));
  }
}

// The AVX2 kernel for this (head_dim, group), or nullptr where there is none.
template <typename C>
GroupFn<C> group_kernel(int64_t head_dim, int64_t group) {
  if constexpr (std::is_same_v<C, int8_t>) {
    auto for_dim = [&](auto nv) -> GroupFn<C> {
      constexpr int NV = decltype(nv)::value;
      switch (group) {
        case 1: return attend_group_int8_avx2<NV, 1>;
        case 2: return attend_group_int8_avx2<NV, 2>;
        case 3: return attend_group_int8_avx2<NV, 3>;
        case 4: return attend_group_int8_avx2<NV, 4>;
        default: return nullptr;
      }
    };
    if (head_dim == 64) return for_dim(std::integral_constant<int, 8>{});
    if (head_dim == 128) return for_dim(std::integral_constant<int, 16>{});
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

}  // namespace roseinfer::attention
#endif
