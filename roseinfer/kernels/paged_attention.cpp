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

#if defined(__AVX512F__)
// The same for head_dim = 16 * NV, with the query and the accumulator held in registers.
template <typename T, int NV>
void attend_head_avx512(const float* q, const T* kc, const T* vc, const int64_t* table,
                        int64_t len, int64_t block_size, int64_t row, float* scores,
                        float* acc) {
  __m512 qv[NV];
  for (int i = 0; i < NV; ++i) qv[i] = _mm512_loadu_ps(q + 16 * i);
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t start = 0; start < len; start += block_size) {
    const T* key = kc + table[start / block_size] * block_size * row;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; ++j, key += row) {
      __m512 s = _mm512_mul_ps(qv[0], load16(key));
      for (int i = 1; i < NV; ++i) s = _mm512_fmadd_ps(qv[i], load16(key + 16 * i), s);
      const float score = _mm512_reduce_add_ps(s);
      scores[start + j] = score;
      mx = std::max(mx, score);
    }
  }
  const __m512 mxv = _mm512_set1_ps(mx);
  __m512 sumv = _mm512_setzero_ps();
  int64_t t = 0;
  for (; t + 16 <= len; t += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(scores + t), mxv));
    _mm512_storeu_ps(scores + t, e);
    sumv = _mm512_add_ps(sumv, e);
  }
  if (t < len) {
    const __mmask16 m = static_cast<__mmask16>((1u << (len - t)) - 1);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, scores + t), mxv));
    _mm512_mask_storeu_ps(scores + t, m, e);
    sumv = _mm512_add_ps(sumv, _mm512_maskz_mov_ps(m, e));
  }
  const float sum = _mm512_reduce_add_ps(sumv);
  __m512 av[NV];
  for (int i = 0; i < NV; ++i) av[i] = _mm512_setzero_ps();
  for (int64_t start = 0; start < len; start += block_size) {
    const T* value = vc + table[start / block_size] * block_size * row;
    const int64_t n = std::min(block_size, len - start);
    for (int64_t j = 0; j < n; ++j, value += row) {
      const __m512 p = _mm512_set1_ps(scores[start + j]);
      for (int i = 0; i < NV; ++i) av[i] = _mm512_fmadd_ps(p, load16(value + 16 * i), av[i]);
    }
  }
  const __m512 inv = _mm512_set1_ps(1.f / sum);
  for (int i = 0; i < NV; ++i) _mm512_storeu_ps(acc + 16 * i, _mm512_mul_ps(av[i], inv));
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
  // One task per (sequence, query head): its keys stay in L1/L2 for the heads of its group.
  at::parallel_for(0, num_seqs * num_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf(head_dim), acc(head_dim), scores(max_len);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t s = task / num_heads, h = task % num_heads;
      const int64_t kv_offset = (h / group) * head_dim;
      const T* src = qp + s * q.stride(0) + h * q.stride(1);
      for (int64_t d = 0; d < head_dim; ++d) qf[d] = to_float(src[d]) * static_cast<float>(scale);
      const int64_t* table = tables + s * max_blocks;
      const T* keys = kc + kv_offset;
      const T* values = vc + kv_offset;
#if defined(__AVX512F__)
      if (head_dim == 64) {
        attend_head_avx512<T, 4>(qf.data(), keys, values, table, lens[s], block_size, row,
                                 scores.data(), acc.data());
      } else if (head_dim == 128) {
        attend_head_avx512<T, 8>(qf.data(), keys, values, table, lens[s], block_size, row,
                                 scores.data(), acc.data());
      } else
#endif
      {
        attend_head_scalar<T>(qf.data(), keys, values, table, lens[s], block_size, row,
                              head_dim, scores.data(), acc.data());
      }
      T* dst = op + s * out.stride(0) + h * out.stride(1);
      for (int64_t d = 0; d < head_dim; ++d) dst[d] = static_cast<T>(acc[d]);
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
  switch (q.scalar_type()) {
    case at::kFloat: run(float{}); break;
    case at::kBFloat16: run(c10::BFloat16{}); break;
    case at::kHalf: run(c10::Half{}); break;
    default: TORCH_CHECK(false, "paged_decode_attention: unsupported dtype ", q.scalar_type());
  }
  return out;
}

}  // namespace roseinfer
