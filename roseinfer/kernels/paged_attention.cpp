// Paged decode attention on CPU: one query token per sequence, keys and values read in place
// from the block-paged cache (no gathered copy), fp32 accumulation, fp32/bf16/fp16 storage or
// int8 with one fp32 scale per (token, KV head) row (`--kv-cache-dtype int8`).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "attention_amx.h"
#include "attention_avx2.h"
#include "attention_kv.h"
#include "attention_tasks.h"
#include "ops.h"
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
using attention::kMaxStackRow;
using attention::write_kv_row;
using attention::balanced_ranges;
using attention::kSplitMinKeys;
using attention::merge_parts;
using attention::Piece;
using attention::runs_balanced;
#if defined(__AVX2__) || defined(__AVX512F__)
using attention::kPrefetchBlocks;
using attention::prefetch_k_block;
using attention::prefetch_kv_block;
#endif

// Scores of one query head against keys [len] then the softmax-weighted sum of values; the max
// score and the sum of exp(score - max) into stats[0], stats[1]. Plain loops: correct for any
// head_dim, cache dtype and instruction set.
template <typename C>
void attend_head_scalar(const float* q, const KVView<C>& kv, int64_t head_dim, float scale,
                        float* scores, float* acc, float* stats) {
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
  stats[0] = mx;
  stats[1] = sum;
  std::fill(acc, acc + head_dim, 0.f);
  for (int64_t t = 0; t < len; ++t) {
    const C* value = row(kv.v, t);
    const float p = scores[t] / sum * row_scale(kv.v_scale, t);
    for (int64_t d = 0; d < head_dim; ++d) acc[d] += p * to_float(value[d]);
  }
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

// T: the dtype of q, k, v and the output; C: the cache's (T, or int8_t with scales).
template <typename T, typename C>
void decode_kernel(const StepTokens<T>& x, at::Tensor& k_cache, at::Tensor& v_cache,
                   float* k_scales, float* v_scales, const at::Tensor& slot_mapping,
                   const at::Tensor& block_tables, const at::Tensor& context_lens,
                   double scale, at::Tensor& out) {
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
      const T* k_row = x.k + s * x.k_row + h * head_dim;
      if (x.cos != nullptr) {
        rotate_half(k_row, rotated.data(), x.cos + s * half, x.sin + s * half, half);
        k_row = rotated.data();
      }
      // head_dim <= kMaxStackRow for int8: checked by the caller
      write_kv_row(k_row, x.v + s * x.v_row + h * head_dim, slots[s], h, head_dim, num_kv_heads,
                   block_size, kc, vc, k_scales, v_scales);
    }
  });

  int64_t max_len = 0;
  for (int64_t s = 0; s < num_seqs; ++s) max_len = std::max(max_len, lens[s]);
  GroupFn<C> vectorised = nullptr;
#if defined(ROSEINFER_VECF)
  vectorised = group_kernel<C>(head_dim, group);
#endif
  // A task is one (sequence, KV head) and covers the query heads of its group; a piece is a run
  // of a task's blocks [b0, b1), the whole task or a part of it.
  auto view = [&](const Piece& piece) {
    const int64_t kvh = piece.kv_head;
    const bool scaled = k_scales != nullptr;
    return KVView<C>{kc + kvh * head_stride,
                     vc + kvh * head_stride,
                     scaled ? k_scales + kvh * block_size : nullptr,
                     scaled ? v_scales + kvh * block_size : nullptr,
                     tables + piece.seq * max_blocks + piece.b0,
                     piece.len,
                     block_size,
                     block_stride,
                     scale_stride};
  };
  // Blocks b0 to b1 of a task (b1 past its last: to its end).
  auto piece_of = [&](int64_t task, int64_t b0, int64_t b1) {
    const int64_t s = task / num_kv_heads;
    return Piece{task, s, task - s * num_kv_heads, b0,
                 std::min(lens[s], b1 * block_size) - b0 * block_size};
  };
  auto whole = [&](int64_t task) { return piece_of(task, 0, max_blocks); };
  // The first blocks of a piece's K/V, asked for while the piece before it runs: pieces are
  // short (a few blocks each), so waiting for their first blocks would be a large share of them.
  auto prefetch_start = [&](const Piece& piece) {
#if defined(__AVX2__) || defined(__AVX512F__)
    const KVView<C> kv = view(piece);
    const int64_t row_bytes = head_dim * int64_t(sizeof(C));
#if defined(__AVX512F__)
    if (vectorised != nullptr) {  // its value pass asks for its own values (prefetch_v_block)
      for (int64_t b = 0; b < kPrefetchBlocks; ++b) prefetch_k_block(kv, b, row_bytes);
      return;
    }
#endif
    for (int64_t b = 0; b < kPrefetchBlocks; ++b) prefetch_kv_block(kv, b, row_bytes);
#endif
  };
  // A thread's scratch, and its attention over one piece: acc [G, D] normalized by the piece's
  // own sums, row_stats [G, 2] the max and sum it was taken with.
  struct Work {
    std::vector<float> qf, scores;
    std::vector<c10::BFloat16> probs;
    std::vector<T> q_rotated;
  };
  auto new_work = [&] {
    return Work{std::vector<float>(group * head_dim), std::vector<float>(group * max_len),
                std::vector<c10::BFloat16>(group * (max_len + 1)),
                std::vector<T>(x.cos != nullptr ? head_dim : 0)};
  };
  auto attend = [&](Work& w, const Piece& piece, float* acc, float* row_stats) {
    const int64_t s = piece.seq, kvh = piece.kv_head;
    for (int64_t g = 0; g < group; ++g) {
      const T* src = x.q + s * x.q_row + (kvh * group + g) * x.q_head;
      if (x.cos != nullptr) {
        rotate_half(src, w.q_rotated.data(), x.cos + s * half, x.sin + s * half, half);
        src = w.q_rotated.data();
      }
      for (int64_t d = 0; d < head_dim; ++d) w.qf[g * head_dim + d] = to_float(src[d]);
    }
    const KVView<C> kv = view(piece);
    if (vectorised != nullptr) {
      vectorised(w.qf.data(), kv, fscale, w.scores.data(), w.probs.data(), acc, row_stats);
    } else {
      for (int64_t g = 0; g < group; ++g)
        attend_head_scalar<C>(&w.qf[g * head_dim], kv, head_dim, fscale, w.scores.data(),
                              acc + g * head_dim, row_stats + 2 * g);
    }
  };
  auto write = [&](int64_t task, const float* acc) {
    // Task t's group of query heads is heads [t * G, (t + 1) * G) of the flattened [B, H].
    T* dst = op + task * group * head_dim;
    for (int64_t i = 0; i < group * head_dim; ++i) dst[i] = static_cast<T>(acc[i]);
  };
  const int64_t tasks = num_seqs * num_kv_heads, threads = at::get_num_threads();
  // Whole tasks: each thread one run of them holding about the same number of keys.
  const std::vector<int64_t> bounds = balanced_ranges(lens, num_seqs, num_kv_heads, threads);
  if (max_len < kSplitMinKeys || runs_balanced(lens, num_kv_heads, bounds, threads)) {
    parallel_for(0, int64_t(bounds.size()) - 1, 1, [&](int64_t r0, int64_t r1) {
      Work w = new_work();
      std::vector<float> acc(group * head_dim), row_stats(2 * group);
      for (int64_t r = r0; r < r1; ++r) {
        if (bounds[r] == bounds[r + 1]) continue;
        Piece next = whole(bounds[r]);
        prefetch_start(next);
        for (int64_t task = bounds[r]; task < bounds[r + 1]; ++task) {
          const Piece piece = next;
          if (task + 1 < bounds[r + 1]) prefetch_start(next = whole(task + 1));
          attend(w, piece, acc.data(), row_stats.data());
          write(task, acc.data());
        }
      }
    });
    return;
  }
  // Runs out of balance, a sequence of kSplitMinKeys keys or more (one sequence's 3 KV heads
  // over 2 threads would go 2 : 1, 16 threads would leave 13 idle, a long sequence beside short
  // ones would give one thread its every head): the tasks' blocks laid end to end and cut into
  // one run per thread, so a task may be attended in parts on several threads (flash-decoding's
  // split of the keys). A thread's run holds at most two parts, its first piece and its last;
  // their accs and stats wait in the thread's two slots, then each split task's are merged.
  std::vector<int64_t> first_block{0};  // task t: blocks [first_block[t], first_block[t + 1])
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t blocks = (lens[task / num_kv_heads] + block_size - 1) / block_size;
    first_block.push_back(first_block.back() + blocks);
  }
  const int64_t total = first_block.back();
  const int64_t slot_size = group * head_dim + 2 * group;  // acc, then row_stats
  std::vector<float> parts(2 * threads * slot_size);
  std::vector<int64_t> part_task(2 * threads, -1);
  parallel_for(0, threads, 1, [&](int64_t r0, int64_t r1) {
    Work w = new_work();
    std::vector<float> acc(group * head_dim), row_stats(2 * group);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t begin = total * r / threads, end = total * (r + 1) / threads;
      std::vector<Piece> pieces;
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t b0 = std::max(begin, first_block[task]);
        const int64_t b1 = std::min(end, first_block[task + 1]);
        if (b0 < b1)
          pieces.push_back(piece_of(task, b0 - first_block[task], b1 - first_block[task]));
      }
      if (!pieces.empty()) prefetch_start(pieces[0]);
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (i + 1 < pieces.size()) prefetch_start(pieces[i + 1]);
        const Piece& piece = pieces[i];
        if (piece.b0 == 0 && piece.len == lens[piece.seq]) {
          attend(w, piece, acc.data(), row_stats.data());
          write(piece.task, acc.data());
        } else {
          const int64_t slot = 2 * r + (i == 0 ? 0 : 1);
          float* part = parts.data() + slot * slot_size;
          attend(w, piece, part, part + group * head_dim);
          part_task[slot] = piece.task;
        }
      }
    }
  });
  merge_parts(parts.data(), part_task, group, head_dim, write);
}

}  // namespace

namespace {

// The checks both entries share: the caches and index tensors against the step's tokens (B of
// them, H query heads, head_dim D, dtype); whether the caches are int8 (with their scales).
bool check_step(const at::Tensor& k_cache, const at::Tensor& v_cache, int64_t num_seqs,
                int64_t num_heads, int64_t head_dim, at::ScalarType dtype,
                const c10::optional<at::Tensor>& k_scale,
                const c10::optional<at::Tensor>& v_scale, const at::Tensor& slot_mapping,
                const at::Tensor& block_tables, const at::Tensor& context_lens) {
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
at::Tensor run_decode(at::ScalarType dtype, const at::TensorOptions& options,
                         const MakeTokens& make_tokens, at::Tensor& k_cache,
                         at::Tensor& v_cache, const c10::optional<at::Tensor>& k_scale,
                         const c10::optional<at::Tensor>& v_scale,
                         const at::Tensor& slot_mapping, const at::Tensor& block_tables,
                         const at::Tensor& context_lens, double scale, bool int8_cache,
                         const c10::optional<at::Tensor>& out, const at::Tensor& input) {
  at::Tensor result;
  dispatch(dtype, "paged_decode_attention", [&](auto tag) {
    using T = decltype(tag);
    const StepTokens<T> tokens = make_tokens(tag);
    result = output_tensor(out, {tokens.num_seqs, tokens.num_heads, tokens.head_dim}, options, input,
                        "paged_decode_attention");
    if (int8_cache)
      decode_kernel<T, int8_t>(tokens, k_cache, v_cache, k_scale->data_ptr<float>(),
                               v_scale->data_ptr<float>(), slot_mapping, block_tables,
                               context_lens, scale, result);
    else
      decode_kernel<T, T>(tokens, k_cache, v_cache, nullptr, nullptr, slot_mapping,
                          block_tables, context_lens, scale, result);
  });
  return result;
}

}  // namespace

at::Tensor paged_decode_attention(at::Tensor q, at::Tensor k, at::Tensor v,
                                     at::Tensor k_cache, at::Tensor v_cache,
                                     at::Tensor slot_mapping, at::Tensor block_tables,
                                     at::Tensor context_lens, double scale,
                                     c10::optional<at::Tensor> k_scale,
                                     c10::optional<at::Tensor> v_scale,
                                     c10::optional<at::Tensor> out) {
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
                    v_scale, slot_mapping, block_tables, context_lens, scale, int8_cache, out, q);
}

at::Tensor paged_decode_attention_qkv(at::Tensor qkv, at::Tensor cos, at::Tensor sin,
                                         int64_t num_heads, at::Tensor k_cache,
                                         at::Tensor v_cache, at::Tensor slot_mapping,
                                         at::Tensor block_tables, at::Tensor context_lens,
                                         double scale, c10::optional<at::Tensor> k_scale,
                                         c10::optional<at::Tensor> v_scale,
                                         c10::optional<at::Tensor> out) {
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
                    v_scale, slot_mapping, block_tables, context_lens, scale, int8_cache, out,
                    qkv);
}

}  // namespace roseinfer
