// Paged decode attention on CPU: one query token per sequence, keys and values read in place
// from the block-paged cache (no gathered copy), fp32 accumulation, fp32/bf16/fp16 storage.
#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "vec.h"

namespace roseinfer {
namespace {

// Scores of one query head against keys [len] then the softmax-weighted sum of values.
// Plain loops: correct for any head_dim and instruction set.
template <typename T>
void attend_head_scalar(const float* q, const T* kc, const T* vc, const int64_t* table,
                        int64_t len, int64_t block_size, int64_t row, int64_t head_dim,
                        float* scores, float* acc) {
  for (int64_t t = 0; t < len; ++t) {
    const T* key = kc + (table[t / block_size] * block_size + t % block_size) * row;
    float s = 0.f;
    for (int64_t d = 0; d < head_dim; ++d) s += q[d] * to_float(key[d]);
    scores[t] = s;
  }
  const float mx = *std::max_element(scores, scores + len);
  float sum = 0.f;
  for (int64_t t = 0; t < len; ++t) sum += (scores[t] = std::exp(scores[t] - mx));
  std::fill(acc, acc + head_dim, 0.f);
  for (int64_t t = 0; t < len; ++t) {
    const T* value = vc + (table[t / block_size] * block_size + t % block_size) * row;
    const float p = scores[t] / sum;
    for (int64_t d = 0; d < head_dim; ++d) acc[d] += p * to_float(value[d]);
  }
}

// A kernel for the G query heads of one KV head (queries pre-scaled, fp32).
template <typename T>
using GroupFn = void (*)(const float*, const T*, const T*, const int64_t*, int64_t, int64_t,
                         int64_t, float*, float*);

#if defined(__AVX512F__)
// Asks for the cache lines of one head's rows in a block ahead of use: the blocks of a
// sequence are scattered, so the hardware prefetchers cannot see the next one coming, and a
// decode step reads K/V that the weights streamed through since have evicted from the caches.
template <typename T>
inline void prefetch_block(const T* rows, int64_t n, int64_t row, int64_t head_bytes) {
  for (int64_t j = 0; j < n; ++j, rows += row) {
    const char* p = reinterpret_cast<const char*>(rows);
    for (int64_t b = 0; b < head_bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
  }
}

constexpr int64_t kPrefetchBlocks = 2;

// The G query heads that share one KV head, for head_dim = 16 * NV: each key and value row is
// loaded and widened once for all G heads; queries and accumulators stay in registers.
template <typename T, int NV, int G>
void attend_group_avx512(const float* q, const T* kc, const T* vc, const int64_t* table,
                         int64_t len, int64_t block_size, int64_t row, float* scores,
                         float* acc) {
  __m512 qv[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) qv[g][i] = _mm512_loadu_ps(q + (g * NV + i) * 16);
  const int64_t num_blocks = (len + block_size - 1) / block_size;
  const int64_t head_bytes = 16 * NV * sizeof(T);
  auto prefetch = [&](const T* cache, int64_t b) {
    if (b < num_blocks)
      prefetch_block(cache + table[b] * block_size * row,
                     std::min(block_size, len - b * block_size), row, head_bytes);
  };
  // K and V both: V is read right after the K pass, from L1/L2 by then (a few KB per head).
  for (int64_t b = 0; b < kPrefetchBlocks; ++b) prefetch(kc, b), prefetch(vc, b);
  float mx[G];
  for (int g = 0; g < G; ++g) mx[g] = -std::numeric_limits<float>::infinity();
  for (int64_t start = 0; start < len; start += block_size) {
    prefetch(kc, start / block_size + kPrefetchBlocks);
    prefetch(vc, start / block_size + kPrefetchBlocks);
    const T* key = kc + table[start / block_size] * block_size * row;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; ++j, key += row) {
      __m512 kv[NV];
      for (int i = 0; i < NV; ++i) kv[i] = load16(key + 16 * i);
      for (int g = 0; g < G; ++g) {
        __m512 s = _mm512_mul_ps(qv[g][0], kv[0]);
        for (int i = 1; i < NV; ++i) s = _mm512_fmadd_ps(qv[g][i], kv[i], s);
        const float score = _mm512_reduce_add_ps(s);
        scores[g * len + start + j] = score;
        mx[g] = std::max(mx[g], score);
      }
    }
  }
  float inv_sum[G];
  for (int g = 0; g < G; ++g) {
    float* sc = scores + g * len;
    const __m512 mxv = _mm512_set1_ps(mx[g]);
    __m512 sumv = _mm512_setzero_ps();
    int64_t t = 0;
    for (; t + 16 <= len; t += 16) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(sc + t), mxv));
      _mm512_storeu_ps(sc + t, e);
      sumv = _mm512_add_ps(sumv, e);
    }
    if (t < len) {
      const __mmask16 m = static_cast<__mmask16>((1u << (len - t)) - 1);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, sc + t), mxv));
      _mm512_mask_storeu_ps(sc + t, m, e);
      sumv = _mm512_add_ps(sumv, _mm512_maskz_mov_ps(m, e));
    }
    inv_sum[g] = 1.f / _mm512_reduce_add_ps(sumv);
  }
  __m512 av[G][NV];
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < NV; ++i) av[g][i] = _mm512_setzero_ps();
  for (int64_t start = 0; start < len; start += block_size) {
    const T* value = vc + table[start / block_size] * block_size * row;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; ++j, value += row) {
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

template <typename T>
GroupFn<T> group_kernel(int64_t head_dim, int64_t group) {
  if (head_dim == 64) return group_kernel_for<T, 4>(group);
  if (head_dim == 128) return group_kernel_for<T, 8>(group);
  return nullptr;
}
#endif

template <typename T>
void decode_kernel(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   torch::Tensor& k_cache, torch::Tensor& v_cache,
                   const torch::Tensor& slot_mapping, const torch::Tensor& block_tables,
                   const torch::Tensor& context_lens, int64_t block_size, double scale,
                   torch::Tensor& out) {
  const int64_t num_seqs = q.size(0), num_heads = q.size(1), head_dim = q.size(2);
  const int64_t num_kv_heads = k_cache.size(1), group = num_heads / num_kv_heads;
  const int64_t max_blocks = block_tables.size(1);
  const int64_t row = num_kv_heads * head_dim;  // elements per cache slot
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
    std::copy_n(kp + s * k.stride(0), row, kc + slots[s] * row);
    std::copy_n(vp + s * v.stride(0), row, vc + slots[s] * row);
  }

  int64_t max_len = 0;
  for (int64_t s = 0; s < num_seqs; ++s) max_len = std::max(max_len, lens[s]);
  GroupFn<T> vectorised = nullptr;
#if defined(__AVX512F__)
  vectorised = group_kernel<T>(head_dim, group);
#endif
  // One task per (sequence, KV head), covering the query heads of its group.
  at::parallel_for(0, num_seqs * num_kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf(group * head_dim), acc(group * head_dim), scores(group * max_len);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t s = task / num_kv_heads, kvh = task % num_kv_heads;
      for (int64_t g = 0; g < group; ++g) {
        const T* src = qp + s * q.stride(0) + (kvh * group + g) * q.stride(1);
        for (int64_t d = 0; d < head_dim; ++d)
          qf[g * head_dim + d] = to_float(src[d]) * static_cast<float>(scale);
      }
      const int64_t* table = tables + s * max_blocks;
      const T* keys = kc + kvh * head_dim;
      const T* values = vc + kvh * head_dim;
      if (vectorised != nullptr) {
        vectorised(qf.data(), keys, values, table, lens[s], block_size, row, scores.data(),
                   acc.data());
      } else {
        for (int64_t g = 0; g < group; ++g)
          attend_head_scalar<T>(&qf[g * head_dim], keys, values, table, lens[s], block_size,
                                row, head_dim, scores.data(), &acc[g * head_dim]);
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
                                     torch::Tensor context_lens, int64_t block_size,
                                     double scale) {
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, "q, k, v must be [B, heads, D]");
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
    decode_kernel<T>(q, k, v, k_cache, v_cache, slot_mapping, block_tables, context_lens,
                     block_size, scale, out);
  };
  dispatch(q.scalar_type(), "paged_decode_attention", run);
  return out;
}

}  // namespace roseinfer
