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
#include "parallel.h"
#include "rotary.h"
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

// The step's new tokens as the kernel reads them: q [B, H, D], k and v [B, KVH, D] (heads
// contiguous) as row pointers and strides, views of the fused qkv projection or tensors of
// their own; with cos and sin [B, D/2], q and k are rotated (rotate_half) on the way in.
template <typename T>
struct StepTokens {
  const T* q;
  int64_t q_row, q_head;
  const T* k;
  int64_t k_row;
  const T* v;
  int64_t v_row;
  const T* cos;  // or nullptr: q and k already rotated
  const T* sin;
  int64_t num_seqs, num_heads, head_dim;
};

// head_dim's bound for int8 caches, whose rows the kernel quantizes on the stack.
constexpr int64_t kMaxStackRow = 512;

// T: the dtype of q, k, v and the output; C: the cache's (T, or int8_t with scales).
template <typename T, typename C>
void decode_kernel(const StepTokens<T>& x, torch::Tensor& k_cache, torch::Tensor& v_cache,
                   float* k_scales, float* v_scales, const torch::Tensor& slot_mapping,
                   const torch::Tensor& block_tables, const torch::Tensor& context_lens,
                   double scale, torch::Tensor& out) {
  const int64_t num_seqs = x.num_seqs, num_heads = x.num_heads, head_dim = x.head_dim;
  const int64_t num_kv_heads = k_cache.size(1), block_size = k_cache.size(2);
  const int64_t group = num_heads / num_kv_heads;
  const float fscale = static_cast<float>(scale);
  const int64_t max_blocks = block_tables.size(1);
  const int64_t head_stride = block_size * head_dim;      // one KV head's rows of a block
  const int64_t block_stride = num_kv_heads * head_stride;  // one block, all heads
  const int64_t scale_stride = num_kv_heads * block_size;   // one block's scales
  const int64_t half = head_dim / 2;
  C* kc = k_cache.data_ptr<C>();
  C* vc = v_cache.data_ptr<C>();
  T* op = out.data_ptr<T>();
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  const int64_t* lens = context_lens.data_ptr<int64_t>();

  // The new token's K/V go into the cache first: each sequence attends to itself too (and a
  // prompt's tokens, when a step's chunks come through here, to each other's). In parallel: at
  // batch 32 the int8 rows took ~15 µs per layer on one thread while the other waited.
  const int64_t* slots = slot_mapping.data_ptr<int64_t>();
  parallel_for(0, num_seqs * num_kv_heads, 16, [&](int64_t w0, int64_t w1) {
    std::vector<T> rotated(x.cos != nullptr ? head_dim : 0);
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t s = w / num_kv_heads, h = w % num_kv_heads;
      const int64_t block = slots[s] / block_size, offset = slots[s] % block_size;
      const int64_t at = block * block_stride + offset * head_dim;
      const T* k_row = x.k + s * x.k_row + h * head_dim;
      const T* v_row = x.v + s * x.v_row + h * head_dim;
      if (x.cos != nullptr) {
        rotate_half(k_row, rotated.data(), x.cos + s * half, x.sin + s * half, half);
        k_row = rotated.data();
      }
      if constexpr (std::is_same_v<C, int8_t>) {
        const int64_t scale_at = block * scale_stride + h * block_size + offset;
        int8_t row[kMaxStackRow];  // head_dim <= kMaxStackRow: checked by the caller
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
    std::vector<T> q_rotated(x.cos != nullptr ? head_dim : 0);
    prefetch_start(begin);
    for (int64_t task = begin; task < end; ++task) {
      if (task + 1 < end) prefetch_start(task + 1);
      const int64_t s = task / num_kv_heads, kvh = task % num_kv_heads;
      for (int64_t g = 0; g < group; ++g) {
        const T* src = x.q + s * x.q_row + (kvh * group + g) * x.q_head;
        if (x.cos != nullptr) {
          rotate_half(src, q_rotated.data(), x.cos + s * half, x.sin + s * half, half);
          src = q_rotated.data();
        }
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
        T* dst = op + (s * num_heads + kvh * group + g) * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) dst[d] = static_cast<T>(acc[g * head_dim + d]);
      }
    }
  };
  // Each thread gets one run of tasks holding about the same number of keys.
  const std::vector<int64_t> bounds =
      balanced_ranges(lens, num_seqs, num_kv_heads, at::get_num_threads());
  parallel_for(0, int64_t(bounds.size()) - 1, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      if (bounds[r] < bounds[r + 1]) run_tasks(bounds[r], bounds[r + 1]);
  });
}

}  // namespace

namespace {

// The checks both entries share: the caches and index tensors against the step's tokens (B of
// them, H query heads, head_dim D, dtype); whether the caches are int8 (with their scales).
bool check_step(const torch::Tensor& k_cache, const torch::Tensor& v_cache, int64_t num_seqs,
                int64_t num_heads, int64_t head_dim, at::ScalarType dtype,
                const c10::optional<torch::Tensor>& k_scale,
                const c10::optional<torch::Tensor>& v_scale, const torch::Tensor& slot_mapping,
                const torch::Tensor& block_tables, const torch::Tensor& context_lens) {
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.sizes() == v_cache.sizes(),
              "the caches must be [num_blocks, kv_heads, block_size, head_dim], both alike");
  TORCH_CHECK(k_cache.size(3) == head_dim, "q and the caches disagree on head_dim");
  TORCH_CHECK(k_cache.is_contiguous() && v_cache.is_contiguous(), "caches must be contiguous");
  TORCH_CHECK(k_cache.scalar_type() == v_cache.scalar_type(), "the caches must share a dtype");
  const bool int8_cache = attention::int8_cache_scales(k_cache, k_scale, v_scale);
  TORCH_CHECK(int8_cache || k_cache.scalar_type() == dtype,
              "q, k, v and the cache must share a dtype (or the cache be int8)");
  if (int8_cache) {
    TORCH_CHECK(head_dim % 4 == 0 && head_dim <= kMaxStackRow,
                "an int8 cache needs head_dim a multiple of 4, at most 512 (its keys are stored "
                "in groups of 4)");
  }
  TORCH_CHECK(num_heads % k_cache.size(1) == 0, "query heads must be a multiple of kv heads");
  TORCH_CHECK(block_tables.scalar_type() == at::kLong && slot_mapping.scalar_type() == at::kLong &&
                  context_lens.scalar_type() == at::kLong,
              "index tensors must be int64");
  TORCH_CHECK(block_tables.is_contiguous() && slot_mapping.is_contiguous() &&
                  context_lens.is_contiguous(),
              "index tensors must be contiguous");
  TORCH_CHECK(block_tables.dim() == 2 && block_tables.size(0) >= num_seqs &&
                  slot_mapping.numel() >= num_seqs && context_lens.numel() >= num_seqs,
              "a slot, a block table row and a length for every token");
  return int8_cache;
}

// out [B, H, D] = the kernel over the tokens `make_tokens(T{})` gives, T being dtype's type.
template <typename MakeTokens>
torch::Tensor run_decode(at::ScalarType dtype, const at::TensorOptions& options,
                         const MakeTokens& make_tokens, torch::Tensor& k_cache,
                         torch::Tensor& v_cache, const c10::optional<torch::Tensor>& k_scale,
                         const c10::optional<torch::Tensor>& v_scale,
                         const torch::Tensor& slot_mapping, const torch::Tensor& block_tables,
                         const torch::Tensor& context_lens, double scale, bool int8_cache) {
  torch::Tensor out;
  dispatch(dtype, "paged_decode_attention", [&](auto tag) {
    using T = decltype(tag);
    const StepTokens<T> tokens = make_tokens(tag);
    out = torch::empty({tokens.num_seqs, tokens.num_heads, tokens.head_dim}, options);
    if (int8_cache)
      decode_kernel<T, int8_t>(tokens, k_cache, v_cache, k_scale->data_ptr<float>(),
                               v_scale->data_ptr<float>(), slot_mapping, block_tables,
                               context_lens, scale, out);
    else
      decode_kernel<T, T>(tokens, k_cache, v_cache, nullptr, nullptr, slot_mapping,
                          block_tables, context_lens, scale, out);
  });
  return out;
}

}  // namespace

torch::Tensor paged_decode_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                                     torch::Tensor k_cache, torch::Tensor v_cache,
                                     torch::Tensor slot_mapping, torch::Tensor block_tables,
                                     torch::Tensor context_lens, double scale,
                                     c10::optional<torch::Tensor> k_scale,
                                     c10::optional<torch::Tensor> v_scale) {
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, "q, k, v must be [B, heads, D]");
  TORCH_CHECK(k.size(1) == k_cache.size(1) && k.sizes() == v.sizes() && k.size(0) == q.size(0) &&
                  k.size(2) == q.size(2),
              "q, k, v and the caches disagree on heads or head_dim");
  TORCH_CHECK(q.stride(2) == 1 && k.stride(2) == 1 && v.stride(2) == 1,
              "q, k, v must have contiguous head_dim");
  TORCH_CHECK(k.stride(1) == k.size(2) && v.stride(1) == v.size(2),
              "k and v heads must be contiguous");
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
              "q, k, v and the cache must share a dtype (or the cache be int8)");
  const bool int8_cache = check_step(k_cache, v_cache, q.size(0), q.size(1), q.size(2),
                                     q.scalar_type(), k_scale, v_scale, slot_mapping,
                                     block_tables, context_lens);
  auto make_tokens = [&](auto tag) {
    using T = decltype(tag);
    return StepTokens<T>{q.data_ptr<T>(), q.stride(0), q.stride(1), k.data_ptr<T>(), k.stride(0),
                         v.data_ptr<T>(), v.stride(0), nullptr, nullptr, q.size(0), q.size(1),
                         q.size(2)};
  };
  return run_decode(q.scalar_type(), q.options(), make_tokens, k_cache, v_cache, k_scale,
                    v_scale, slot_mapping, block_tables, context_lens, scale, int8_cache);
}

torch::Tensor paged_decode_attention_qkv(torch::Tensor qkv, torch::Tensor cos, torch::Tensor sin,
                                         int64_t num_heads, torch::Tensor k_cache,
                                         torch::Tensor v_cache, torch::Tensor slot_mapping,
                                         torch::Tensor block_tables, torch::Tensor context_lens,
                                         double scale, c10::optional<torch::Tensor> k_scale,
                                         c10::optional<torch::Tensor> v_scale) {
  TORCH_CHECK(qkv.dim() == 2 && qkv.stride(1) == 1,
              "qkv must be [B, (H + 2 KVH) * head_dim] with contiguous rows");
  TORCH_CHECK(k_cache.dim() == 4,
              "the caches must be [num_blocks, kv_heads, block_size, head_dim]");
  const int64_t num_kv_heads = k_cache.size(1), head_dim = k_cache.size(3), rows = qkv.size(0);
  TORCH_CHECK(qkv.size(1) == (num_heads + 2 * num_kv_heads) * head_dim,
              "qkv's width is not (H + 2 KVH) * head_dim for these caches");
  TORCH_CHECK(head_dim % 2 == 0, "rotary needs an even head_dim");
  TORCH_CHECK(cos.is_contiguous() && sin.is_contiguous() && cos.dim() == 2 && sin.dim() == 2 &&
                  cos.size(0) == rows && sin.size(0) == rows && cos.size(1) * 2 == head_dim &&
                  sin.size(1) * 2 == head_dim,
              "cos and sin must be contiguous [B, head_dim / 2]");
  TORCH_CHECK(cos.scalar_type() == qkv.scalar_type() && sin.scalar_type() == qkv.scalar_type(),
              "qkv, cos and sin must share a dtype");
  const bool int8_cache =
      check_step(k_cache, v_cache, rows, num_heads, head_dim, qkv.scalar_type(), k_scale,
                 v_scale, slot_mapping, block_tables, context_lens);
  auto make_tokens = [&](auto tag) {
    using T = decltype(tag);
    const T* q = qkv.data_ptr<T>();
    const T* k = q + num_heads * head_dim;
    const T* v = k + num_kv_heads * head_dim;
    const int64_t row = qkv.stride(0);
    return StepTokens<T>{q, row, head_dim, k, row, v, row, cos.data_ptr<T>(), sin.data_ptr<T>(),
                         rows, num_heads, head_dim};
  };
  return run_decode(qkv.scalar_type(), qkv.options(), make_tokens, k_cache, v_cache, k_scale,
                    v_scale, slot_mapping, block_tables, context_lens, scale, int8_cache);
}

}  // namespace roseinfer
