// Decode attention with AVX2 and no AVX-512 (8 lanes, 16 registers), and `group_kernel`,
// which picks it for a cache. Included by `paged_attention.cpp`.
#pragma once

#include <algorithm>
#include <limits>
#include <type_traits>

#include "attention_kv.h"

#if !defined(__AVX512F__) && defined(ROSEINFER_VECF)
namespace roseinfer::attention {

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

}  // namespace roseinfer::attention
#endif
