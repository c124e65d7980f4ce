// The paged cache as the decode-attention kernels see it (`paged_attention.cpp` runs them):
// one (sequence, KV head)'s view of the blocks, the int8 cache's key layout, and the signature
// of a kernel for the query heads that share one KV head.
#pragma once

#include <algorithm>
#include <type_traits>

#include "vec.h"

namespace roseinfer::attention {

// The cache is head-major, [num_blocks, KVH, block_size, D]: one KV head's rows of a block are
// contiguous, so a (sequence, KV head) task streams whole runs of memory instead of picking one
// head out of every slot (the hardware prefetchers follow runs; they cannot follow strides
// across scattered blocks).

// One (sequence, KV head)'s keys and values in the paged cache. `k`/`v` point at this KV head's
// rows of block 0 and `block_stride` elements separate consecutive blocks; int8 caches also
// have a scale per row, `k_scale`/`v_scale` at this head's scales of block 0, `scale_stride`
// apart per block (nullptr for the other dtypes).
template <typename C>
struct KVView {
  const C* k;
  const C* v;
  const float* k_scale;
  const float* v_scale;
  const int64_t* table;
  int64_t len, block_size, block_stride, scale_stride;

  const C* k_block(int64_t b) const { return k + table[b] * block_stride; }
  const C* v_block(int64_t b) const { return v + table[b] * block_stride; }
  const float* k_scales(int64_t b) const { return k_scale + table[b] * scale_stride; }
  const float* v_scales(int64_t b) const { return v_scale + table[b] * scale_stride; }
};

// int8 caches keep a (block, KV head)'s keys transposed in groups of 4 inputs, [D/4][block_size]
// [4], each byte plus 128 (`k ^ 0x80`, an unsigned byte): the next 4 inputs of 16 keys are one
// 64-byte load, which vpdpbusd multiplies by 4 broadcast query bytes into 16 lanes, one sum per
// key, so no horizontal sums, and the 128 * sum(q) that the +128 adds comes off once per query
// head. Values keep rows, [block_size][D]. `roseinfer.layers.kv_cache` writes and reads the same.
inline int64_t int8_key_at(int64_t row, int64_t d, int64_t block_size) {
  return (d / 4) * block_size * 4 + row * 4 + d % 4;
}
inline float int8_key(const int8_t* block, int64_t row, int64_t d, int64_t block_size) {
  return static_cast<float>(static_cast<int8_t>(block[int8_key_at(row, d, block_size)] ^ 0x80));
}

// head_dim's bound for int8 caches, whose rows write_kv_row quantizes on the stack.
constexpr int64_t kMaxStackRow = 512;

// One token's key and value rows of KV head h (D values each, the key rotated already) into
// cache slot `slot`: kc, vc at block 0 of caches [num_blocks, KVH, BS, D]; an int8 cache's rows
// quantized (keys in their transposed layout, plus 128) with their scales into k_scales,
// v_scales ([num_blocks, KVH, BS]; null for other caches). D <= kMaxStackRow for int8.
template <typename T, typename C>
inline void write_kv_row(const T* k_row, const T* v_row, int64_t slot, int64_t h, int64_t D,
                         int64_t KVH, int64_t BS, C* kc, C* vc, float* k_scales,
                         float* v_scales) {
  const int64_t block = slot / BS, offset = slot % BS;
  const int64_t head = (block * KVH + h) * BS * D;  // this KV head's rows of the block
  if constexpr (std::is_same_v<C, int8_t>) {
    const int64_t scale_at = (block * KVH + h) * BS + offset;
    int8_t row[kMaxStackRow];
    quantize_row(k_row, D, row, k_scales + scale_at);
    // A group of 4 inputs is 4 adjacent bytes (D % 4 == 0): a store each, not a byte's
    // (a 2,000-token prompt's rows 10.6 against 5.2 ms; BENCHMARKS.md, session 67).
    for (int64_t d = 0; d < D; d += 4) {
      uint32_t group;
      std::memcpy(&group, row + d, sizeof(group));
      group ^= 0x80808080u;
      std::memcpy(kc + head + int8_key_at(offset, d, BS), &group, sizeof(group));
    }
    quantize_row(v_row, D, vc + head + offset * D, v_scales + scale_at);
  } else {
    std::copy_n(k_row, D, kc + head + offset * D);
    std::copy_n(v_row, D, vc + head + offset * D);
  }
}

#if defined(__AVX2__) || defined(__AVX512F__)
// Asks for one block's rows of a head ahead of use: the blocks of a sequence are scattered, so
// the hardware prefetchers cannot see the next one coming, and a decode step reads K/V that the
// weights streamed through since have evicted from the caches. kIntoL1: prefetcht0, else
// prefetcht1 (into L2).
template <bool kIntoL1>
inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t b = 0; b < bytes; b += 64) {
    if constexpr (kIntoL1)
      prefetch_l1(c + b);
    else
      prefetch_l2(c + b);
  }
}

constexpr int64_t kPrefetchBlocks = 4;  // blocks ahead (BENCHMARKS.md, sessions 21 and 43)

// The AVX-512 kernels' passes ask for their own rows ahead, into L1: the score pass its keys
// (kPrefetchBlocks ahead), the value pass its values (kValueBlocksAhead; the first blocks as the
// score pass ends). Asked for together by the score pass, into L2, the values' lines in flight
// held back the keys it waits on, and were not all in L2 by the value pass either. Apart and into
// L1, the kernel alone takes up to 23 % less (at 32 rows and long contexts), a decode step up
// to 6 % less (BENCHMARKS.md, session 43; session 41 had measured L1 with K and V together: level).

// Block b of a (sequence, KV head)'s keys; an int8 cache's scales of both into L2 (a line per
// block each: the int8 kernel's fixed-point pass reads the value scales before its value pass).
template <bool kIntoL1 = true, typename C>
inline void prefetch_k_block(const KVView<C>& kv, int64_t b, int64_t row_bytes) {
  if (b * kv.block_size < kv.len) {
    const int64_t rows = std::min(kv.block_size, kv.len - b * kv.block_size);
    // int8 keys are transposed: any row's bytes span the whole block.
    prefetch_bytes<kIntoL1>(kv.k_block(b),
                            (std::is_same_v<C, int8_t> ? kv.block_size : rows) * row_bytes);
    if (kv.k_scale != nullptr) {
      prefetch_bytes<false>(kv.k_scales(b), rows * int64_t(sizeof(float)));
      prefetch_bytes<false>(kv.v_scales(b), rows * int64_t(sizeof(float)));
    }
  }
}

// Block b's values.
template <bool kIntoL1 = true, typename C>
inline void prefetch_v_block(const KVView<C>& kv, int64_t b, int64_t row_bytes) {
  if (b * kv.block_size < kv.len)
    prefetch_bytes<kIntoL1>(kv.v_block(b),
                            std::min(kv.block_size, kv.len - b * kv.block_size) * row_bytes);
}

// Blocks a value pass asks for ahead. An int8 cache's value rows are half a bf16 row: at 4 of its
// blocks ahead the int8 kernel's value pass waited on memory, at 8 (the same bytes as bf16's 4) a
// step took 0.6-4.5 % less (BENCHMARKS.md, session 43).
template <typename C>
constexpr int64_t kValueBlocksAhead =
    std::is_same_v<C, int8_t> ? 2 * kPrefetchBlocks : kPrefetchBlocks;

// A value pass's first kValueBlocksAhead blocks.
template <typename C>
inline void prefetch_v_start(const KVView<C>& kv, int64_t row_bytes) {
  for (int64_t b = 0; b < kValueBlocksAhead<C>; ++b) prefetch_v_block(kv, b, row_bytes);
}

// Both, into L2, the values read right after the keys: the AVX2 kernels' score passes (not
// measured apart on an AVX2 host) and the prefill kernel's key tiles, which read both at once.
template <typename C>
inline void prefetch_kv_block(const KVView<C>& kv, int64_t b, int64_t row_bytes) {
  prefetch_k_block<false>(kv, b, row_bytes);
  prefetch_v_block<false>(kv, b, row_bytes);
}
#endif

// Whether the cache is int8, checking that its scales come with it (and only with it), each a
// contiguous fp32 [num_blocks, KVH, block_size].
inline bool int8_cache_scales(const at::Tensor& k_cache,
                              const c10::optional<at::Tensor>& k_scale,
                              const c10::optional<at::Tensor>& v_scale) {
  const bool int8_cache = k_cache.scalar_type() == at::kChar;
  TORCH_CHECK(int8_cache == (k_scale.has_value() && v_scale.has_value()),
              "an int8 cache comes with k_scale and v_scale, other caches without");
  if (int8_cache) {
    const auto rows = k_cache.sizes().slice(0, 3);  // [num_blocks, kv_heads, block_size]
    TORCH_CHECK(k_scale->sizes() == rows && v_scale->sizes() == rows &&
                    k_scale->scalar_type() == at::kFloat && v_scale->scalar_type() == at::kFloat &&
                    k_scale->is_contiguous() && v_scale->is_contiguous(),
                "k_scale and v_scale must be contiguous fp32 [num_blocks, kv_heads, block_size]");
  }
  return int8_cache;
}

// A kernel for the G query heads of one KV head: (q [G, D] fp32 unscaled, the head's K/V, scale,
// scores [G, len], probs [G, len + 1], acc [G, D], row_stats [G, 2]). acc gets each head's
// softmax-weighted values; row_stats each head's max score and its sum of exp(score - max), with
// which the caller merges the accs of a head's keys attended in parts (paged_attention.cpp).
template <typename C>
using GroupFn = void (*)(const float*, const KVView<C>&, float, float*, c10::BFloat16*, float*,
                         float*);

}  // namespace roseinfer::attention
