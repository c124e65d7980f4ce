// Paged decode attention on CPU: one query token per sequence, keys and values read in place
// from the block-paged cache (no gathered copy), fp32 accumulation, fp32/bf16/fp16 storage or
// int8 with one fp32 scale per (token, KV head) row (`--kv-cache-dtype int8`).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "attention_avx2.h"
#include "attention_avx512_pairs.h"
#include "attention_kv.h"
#include "vec.h"

namespace roseinfer {
namespace {

using attention::GroupFn;
#if defined(ROSEINFER_VECF)
using attention::group_kernel;
#endif
using attention::int8_key;
using attention::int8_key_at;
using attention::KVView;
#if defined(__AVX2__) || defined(__AVX512F__)
using attention::kPrefetchBlocks;
using attention::prefetch_kv_block;
#endif

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
#if defined(__AVX2__) || defined(__AVX512F__)
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
  const bool int8_cache = attention::int8_cache_scales(k_cache, k_scale, v_scale);
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type() &&
                  (int8_cache || k_cache.scalar_type() == q.scalar_type()),
              "q, k, v and the cache must share a dtype (or the cache be int8)");
  if (int8_cache) {
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
