// Paged decode attention on CPU: one query token per sequence, keys and values read in place
// from the block-paged cache (no gathered copy), fp32 accumulation, fp32/bf16/fp16 storage.
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

// Scores of one query head against keys [len] then the softmax-weighted sum of values.
// Plain loops: correct for any head_dim and instruction set. `kc`/`vc` point at this KV head's
// rows of block 0; `block_stride` elements separate consecutive blocks.
template <typename T>
void attend_head_scalar(const float* q, const T* kc, const T* vc, const int64_t* table,
                        int64_t len, int64_t block_size, int64_t block_stride, int64_t head_dim,
                        float scale, float* scores, float* acc) {
  auto row = [&](const T* cache, int64_t t) {
    return cache + table[t / block_size] * block_stride + (t % block_size) * head_dim;
  };
  for (int64_t t = 0; t < len; ++t) {
    const T* key = row(kc, t);
    float s = 0.f;
    for (int64_t d = 0; d < head_dim; ++d) s += q[d] * to_float(key[d]);
    scores[t] = s * scale;
  }
  const float mx = *std::max_element(scores, scores + len);
  float sum = 0.f;
  for (int64_t t = 0; t < len; ++t) sum += (scores[t] = std::exp(scores[t] - mx));
  std::fill(acc, acc + head_dim, 0.f);
  for (int64_t t = 0; t < len; ++t) {
    const T* value = row(vc, t);
    const float p = scores[t] / sum;
    for (int64_t d = 0; d < head_dim; ++d) acc[d] += p * to_float(value[d]);
  }
}

// A kernel for the G query heads of one KV head: (q [G, D] fp32 unscaled, keys, values, table,
// len, block_size, block_stride, scale, scores [G, len], probs [G, len + 1], acc [G, D]).
template <typename T>
using GroupFn = void (*)(const float*, const T*, const T*, const int64_t*, int64_t, int64_t,
                         int64_t, float, float*, c10::BFloat16*, float*);

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
template <typename T>
inline void prefetch_kv_block(const T* kc, const T* vc, const int64_t* table, int64_t b,
                              int64_t len, int64_t block_size, int64_t block_stride,
                              int64_t row_bytes) {
  if (b * block_size < len) {
    const int64_t bytes = std::min(block_size, len - b * block_size) * row_bytes;
    prefetch_bytes(kc + table[b] * block_stride, bytes);
    prefetch_bytes(vc + table[b] * block_stride, bytes);
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
// about three instructions per vector where one horizontal sum takes eight.
inline __m512 hsum16(const __m512* v) {
  __m512 r[8], s[4];
  for (int i = 0; i < 8; ++i)  // per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3]
    r[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // per 128-bit lane: the lane's partial sums of 4 vectors
    s[i] = _mm512_add_ps(_mm512_shuffle_ps(r[2 * i], r[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(r[2 * i], r[2 * i + 1], 0xEE));
  // Then across the four 128-bit lanes, twice.
  const __m512 t0 = _mm512_add_ps(_mm512_shuffle_f32x4(s[0], s[1], 0x88),
                                  _mm512_shuffle_f32x4(s[0], s[1], 0xDD));
  const __m512 t1 = _mm512_add_ps(_mm512_shuffle_f32x4(s[2], s[3], 0x88),
                                  _mm512_shuffle_f32x4(s[2], s[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(t0, t1, 0x88), _mm512_shuffle_f32x4(t0, t1, 0xDD));
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

// Scores of G query heads against the keys, 16 keys at a time: 16 dot-product vectors summed
// across lanes together (hsum16) cost a fraction of 16 separate horizontal sums. `dot(g, key)`
// is q_g . key as 16 partial sums; scores are stored scaled, and each row's max kept in mxv.
template <typename T, int G, typename Dot>
inline void score_keys(const Dot& dot, const T* kc, const T* vc, const int64_t* table,
                       int64_t len, int64_t block_size, int64_t block_stride, int64_t D,
                       float scale, float* scores, __m512* mxv) {
  const __m512 scalev = _mm512_set1_ps(scale);
  for (int g = 0; g < G; ++g) mxv[g] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  // The first blocks were asked for by the caller, during the previous task.
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    prefetch_kv_block(kc, vc, table, b + kPrefetchBlocks, len, block_size, block_stride,
                      D * int64_t(sizeof(T)));
    const T* block = kc + table[b] * block_stride;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t c = 0; c < n; c += 16) {
      const T* key = block + c * D;
      const int64_t m = std::min<int64_t>(16, n - c);
      const __mmask16 valid = static_cast<__mmask16>((1u << m) - 1);
      for (int g = 0; g < G; ++g) {
        __m512 dots[16];
        if (m == 16) {
          for (int j = 0; j < 16; ++j) dots[j] = dot(g, key + j * D);
        } else {
          for (int j = 0; j < 16; ++j) dots[j] = j < m ? dot(g, key + j * D) : _mm512_setzero_ps();
        }
        const __m512 sc = _mm512_mul_ps(hsum16(dots), scalev);
        _mm512_mask_storeu_ps(scores + g * len + start + c, valid, sc);
        mxv[g] = _mm512_mask_max_ps(mxv[g], valid, mxv[g], sc);
      }
    }
  }
}

// The G query heads that share one KV head, for head_dim = 16 * NV, any storage type: each key
// and value row is widened to fp32 for fp32 FMAs; queries and accumulators stay in registers.
template <typename T, int NV, int G>
void attend_group_avx512(const float* q, const T* kc, const T* vc, const int64_t* table,
                         int64_t len, int64_t block_size, int64_t block_stride, float scale,
                         float* scores, c10::BFloat16* /*probs*/, float* acc) {
  constexpr int64_t D = 16 * NV;
  __m512 qv[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) qv[g][i] = _mm512_loadu_ps(q + (g * NV + i) * 16);
  auto dot = [&](int g, const T* row) { return dot_row<T, NV>(qv[g], row); };
  __m512 mxv[G];
  score_keys<T, G>(dot, kc, vc, table, len, block_size, block_stride, D, scale, scores, mxv);
  float inv_sum[G];
  softmax_numerators<G>(scores, len, mxv, inv_sum);
  __m512 av[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) av[g][i] = _mm512_setzero_ps();
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    const T* value = vc + table[b] * block_stride;
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

#if defined(__AVX512BF16__)
inline __m512bh load_bf16x32(const c10::BFloat16* p) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
}

// bf16 caches where the CPU has AVX512-BF16, head_dim = 32 * NV: q . k and p . v as dot products
// of bf16 pairs (vdpbf16ps, fp32 sums), so K and V are never widened: about a third of the
// instructions of the fp32 path, which is what bounds it once K/V are in cache. The products
// are exact; p is rounded to bf16 for p . v, as flash-attention kernels do.
template <int NV, int G>
void attend_group_bf16(const float* q, const c10::BFloat16* kc, const c10::BFloat16* vc,
                       const int64_t* table, int64_t len, int64_t block_size, int64_t block_stride,
                       float scale, float* scores, c10::BFloat16* probs, float* acc) {
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
  score_keys<T, G>(dot, kc, vc, table, len, block_size, block_stride, D, scale, scores, mxv);
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
  // Values two rows at a time: unpacking rows t and t+1 gives, per 32-bit lane, the pair
  // (v[t][d], v[t+1][d]) that vdpbf16ps multiplies with (p[t], p[t+1]). Within each 128-bit
  // lane, unpacklo holds dims 0-3 of the lane's 8 and unpackhi dims 4-7: put back at the end.
  __m512 lo[G][NV], hi[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) lo[g][i] = hi[g][i] = _mm512_setzero_ps();
  for (int64_t b = 0, start = 0; start < len; ++b, start += block_size) {
    const T* value = vc + table[b] * block_stride;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; j += 2) {
      const bool pair = j + 1 < n;  // else row t+1 is not this sequence's: zeros, p = 0
      __m512i ul[NV], uh[NV];
      for (int i = 0; i < NV; ++i) {
        const __m512i r0 = _mm512_loadu_si512(value + j * D + 32 * i);
        const __m512i r1 = pair ? _mm512_loadu_si512(value + (j + 1) * D + 32 * i)
                                : _mm512_setzero_si512();
        ul[i] = _mm512_unpacklo_epi16(r0, r1);
        uh[i] = _mm512_unpackhi_epi16(r0, r1);
      }
      for (int g = 0; g < G; ++g) {
        uint32_t pp;
        std::memcpy(&pp, probs + g * stride + start + j, sizeof(pp));
        if (!pair) pp &= 0xFFFFu;
        const __m512bh pv = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(pp)));
        for (int i = 0; i < NV; ++i) {
          lo[g][i] = _mm512_dpbf16_ps(lo[g][i], pv, reinterpret_cast<__m512bh>(ul[i]));
          hi[g][i] = _mm512_dpbf16_ps(hi[g][i], pv, reinterpret_cast<__m512bh>(uh[i]));
        }
      }
    }
  }
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29,
                                           30, 31);
  for (int g = 0; g < G; ++g) {
    const __m512 inv = _mm512_set1_ps(inv_sum[g]);
    for (int i = 0; i < NV; ++i) {
      float* dst = acc + g * D + 32 * i;
      _mm512_storeu_ps(dst, _mm512_mul_ps(_mm512_permutex2var_ps(lo[g][i], first, hi[g][i]), inv));
      _mm512_storeu_ps(dst + 16,
                       _mm512_mul_ps(_mm512_permutex2var_ps(lo[g][i], second, hi[g][i]), inv));
    }
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

template <typename T>
GroupFn<T> group_kernel(int64_t head_dim, int64_t group) {
#if defined(__AVX512BF16__)
  if constexpr (std::is_same_v<T, c10::BFloat16>) {
    GroupFn<T> fn = nullptr;
    if (head_dim == 64) fn = bf16_group_kernel_for<2>(group);
    if (head_dim == 128) fn = bf16_group_kernel_for<4>(group);
    if (fn != nullptr) return fn;
  }
#endif
  if (head_dim == 64) return group_kernel_for<T, 4>(group);
  if (head_dim == 128) return group_kernel_for<T, 8>(group);
  return nullptr;
}
#endif

template <typename T>
void decode_kernel(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   torch::Tensor& k_cache, torch::Tensor& v_cache,
                   const torch::Tensor& slot_mapping, const torch::Tensor& block_tables,
                   const torch::Tensor& context_lens, double scale, torch::Tensor& out) {
  const int64_t num_seqs = q.size(0), num_heads = q.size(1), head_dim = q.size(2);
  const int64_t num_kv_heads = k_cache.size(1), block_size = k_cache.size(2);
  const int64_t group = num_heads / num_kv_heads;
  const float fscale = static_cast<float>(scale);
  const int64_t max_blocks = block_tables.size(1);
  const int64_t head_stride = block_size * head_dim;      // one KV head's rows of a block
  const int64_t block_stride = num_kv_heads * head_stride;  // one block, all heads
  const T* qp = q.data_ptr<T>();
  T* kc = k_cache.data_ptr<T>();
  T* vc = v_cache.data_ptr<T>();
  T* op = out.data_ptr<T>();
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  const int64_t* lens = context_lens.data_ptr<int64_t>();

  // The new token's K/V go into the cache first: each sequence attends to itself too.
  const T* kp = k.data_ptr<T>();
  const T* vp = v.data_ptr<T>();
  const int64_t* slots = slot_mapping.data_ptr<int64_t>();
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t at = slots[s] / block_size * block_stride + slots[s] % block_size * head_dim;
    for (int64_t h = 0; h < num_kv_heads; ++h) {
      std::copy_n(kp + s * k.stride(0) + h * head_dim, head_dim, kc + at + h * head_stride);
      std::copy_n(vp + s * v.stride(0) + h * head_dim, head_dim, vc + at + h * head_stride);
    }
  }

  int64_t max_len = 0;
  for (int64_t s = 0; s < num_seqs; ++s) max_len = std::max(max_len, lens[s]);
  GroupFn<T> vectorised = nullptr;
#if defined(__AVX512F__)
  vectorised = group_kernel<T>(head_dim, group);
#endif
  // The first blocks of a task's K/V, asked for while the task before it runs: tasks are short
  // (a few blocks each), so waiting for their first blocks would be a large share of them.
  auto prefetch_start = [&](int64_t task) {
#if defined(__AVX512F__)
    const int64_t s = task / num_kv_heads, kvh = task % num_kv_heads;
    for (int64_t b = 0; b < kPrefetchBlocks; ++b)
      prefetch_kv_block(kc + kvh * head_stride, vc + kvh * head_stride, tables + s * max_blocks,
                        b, lens[s], block_size, block_stride, head_dim * int64_t(sizeof(T)));
#endif
  };
  // One task per (sequence, KV head), covering the query heads of its group.
  at::parallel_for(0, num_seqs * num_kv_heads, 1, [&](int64_t begin, int64_t end) {
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
      const int64_t* table = tables + s * max_blocks;
      const T* keys = kc + kvh * head_stride;
      const T* values = vc + kvh * head_stride;
      if (vectorised != nullptr) {
        vectorised(qf.data(), keys, values, table, lens[s], block_size, block_stride, fscale,
                   scores.data(), probs.data(), acc.data());
      } else {
        for (int64_t g = 0; g < group; ++g)
          attend_head_scalar<T>(&qf[g * head_dim], keys, values, table, lens[s], block_size,
                                block_stride, head_dim, fscale, scores.data(), &acc[g * head_dim]);
      }
      for (int64_t g = 0; g < group; ++g) {
        T* dst = op + s * out.stride(0) + (kvh * group + g) * out.stride(1);
        for (int64_t d = 0; d < head_dim; ++d) dst[d] = static_cast<T>(acc[g * head_dim + d]);
      }
    }
  });
}

}  // namespace

torch::Tensor paged_decode_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                                     torch::Tensor k_cache, torch::Tensor v_cache,
                                     torch::Tensor slot_mapping, torch::Tensor block_tables,
                                     torch::Tensor context_lens, double scale) {
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
  TORCH_CHECK(q.scalar_type() == k_cache.scalar_type() && k.scalar_type() == k_cache.scalar_type(),
              "q, k, v and the cache must share a dtype");
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
    decode_kernel<T>(q, k, v, k_cache, v_cache, slot_mapping, block_tables, context_lens, scale,
                     out);
  };
  dispatch(q.scalar_type(), "paged_decode_attention", run);
  return out;
}

}  // namespace roseinfer
