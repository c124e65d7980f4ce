// The kernels' C++ entry points, for the bindings and for the decoder stack, which calls them
// directly.
#pragma once

#include "aten.h"

namespace roseinfer {
// The entries the decoder stack calls take an optional `out`: the step's buffer for that output,
// which the stack allocates once a step instead of ~200 tensors op by op (2-5 % of a one-row
// step: BENCHMARKS.md, session 34). Without one, the entry allocates its output.
//
// `out` checked to be the contiguous tensor the entry would allocate ([sizes], options' dtype and
// device) and returned; or, without one, a new tensor. `input` (the entry's main input) must not
// be `out`: these kernels read their input while they write.
inline at::Tensor output_tensor(const c10::optional<at::Tensor>& out, at::IntArrayRef sizes,
                                   const at::TensorOptions& options, const at::Tensor& input,
                                   const char* name) {
  if (!out.has_value()) return at::empty(sizes, options);
  TORCH_CHECK(out->sizes() == sizes && out->dtype() == options.dtype() &&
                  out->device() == options.device() && out->is_contiguous(),
              name, ": out must be a contiguous ", sizes, " tensor of ", options.dtype(),
              ", got ", out->sizes(), " of ", out->dtype());
  TORCH_CHECK(out->numel() == 0 || out->data_ptr() != input.data_ptr(), name,
              ": out must not be the input");
  return *out;
}

at::Tensor paged_decode_attention(at::Tensor q, at::Tensor k, at::Tensor v,
                                     at::Tensor k_cache, at::Tensor v_cache,
                                     at::Tensor slot_mapping, at::Tensor block_tables,
                                     at::Tensor context_lens, double scale,
                                     c10::optional<at::Tensor> k_scale,
                                     c10::optional<at::Tensor> v_scale,
                                     c10::optional<at::Tensor> out = c10::nullopt);
// The same over the rows of the fused qkv projection [B, (H + 2 KVH) * D] (no q/k/v views), q and
// k rotated on the way (cos, sin [B, D/2]; qkv itself is left as it is): the decoder stack's call.
at::Tensor paged_decode_attention_qkv(at::Tensor qkv, at::Tensor cos, at::Tensor sin,
                                         int64_t num_heads, at::Tensor k_cache,
                                         at::Tensor v_cache, at::Tensor slot_mapping,
                                         at::Tensor block_tables, at::Tensor context_lens,
                                         double scale, c10::optional<at::Tensor> k_scale,
                                         c10::optional<at::Tensor> v_scale,
                                         c10::optional<at::Tensor> out = c10::nullopt);
at::Tensor rms_norm(at::Tensor x, at::Tensor weight, double eps,
                       c10::optional<at::Tensor> out = c10::nullopt);
at::Tensor add_rms_norm(at::Tensor x, at::Tensor residual, at::Tensor weight,
                           double eps, c10::optional<at::Tensor> out = c10::nullopt);
void rotary_embedding(at::Tensor q, at::Tensor k, at::Tensor cos, at::Tensor sin);
at::Tensor silu_and_mul(at::Tensor x, c10::optional<at::Tensor> out = c10::nullopt);
at::Tensor int8_linear(at::Tensor x, at::Tensor weight, at::Tensor scale,
                          c10::optional<at::Tensor> bias,
                          c10::optional<at::Tensor> out = c10::nullopt);
at::Tensor small_batch_linear(at::Tensor x, at::Tensor weight,
                                 c10::optional<at::Tensor> bias,
                                 c10::optional<at::Tensor> out = c10::nullopt);
int64_t vector_lanes();
// weight [N, K] int8 * scale [N] per row, as fp32 [N, K]: `weight.float() * scale.float()[:, None]`.
at::Tensor int8_dequantize(at::Tensor weight, at::Tensor scale);
bool amx_linear_available();
at::Tensor amx_pack_weight(at::Tensor w);
at::Tensor amx_linear(at::Tensor x, at::Tensor packed, c10::optional<at::Tensor> bias,
                         c10::optional<at::Tensor> out = c10::nullopt);
// k, v [n, KVH, D] into their slots of the paged cache (an int8 cache's rows quantized, with
// their scales), as `LayerCache.write` does.
void write_kv_cache(at::Tensor k, at::Tensor v, at::Tensor k_cache, at::Tensor v_cache,
                    at::Tensor slot_mapping, c10::optional<at::Tensor> k_scale,
                    c10::optional<at::Tensor> v_scale);
at::Tensor paged_prefill_attention(at::Tensor q, at::Tensor k_cache,
                                      at::Tensor v_cache, at::Tensor block_tables,
                                      at::Tensor query_start_loc, at::Tensor context_lens,
                                      double scale, c10::optional<at::Tensor> k_scale,
                                      c10::optional<at::Tensor> v_scale,
                                      const std::string& tile);
// The tile paged_prefill_attention takes for these queries and cache ("auto": the one it picks).
std::string paged_prefill_tile(at::Tensor q, at::Tensor k_cache, const std::string& tile);
std::tuple<at::Tensor, at::Tensor> argmax_rows(at::Tensor logits);
void apply_token_bitmask(at::Tensor logits, at::Tensor bitmask, at::Tensor rows);
// Each row's logsumexp (fp32 [B]) of logits [B, V] fp32/bf16/fp16 with contiguous rows.
at::Tensor logsumexp_rows(at::Tensor logits);
// How many of row r's logits are greater than values[r] (fp32 [B]): int64 [B].
at::Tensor count_greater_rows(at::Tensor logits, at::Tensor values);
// Each row's m largest logits (fp32 [B, m]) and their ids (int64 [B, m]), the larger first,
// equal logits by the lower id.
std::tuple<at::Tensor, at::Tensor> top_candidates_rows(at::Tensor logits, int64_t m);
// Each row's token drawn among its candidates: ids[r, i] with weight weights[r, i] (fp32 [C, m]),
// walked in token order, from u (float64 [C]): int64 [C].
at::Tensor sample_candidates_rows(at::Tensor weights, at::Tensor ids, at::Tensor u);
bool amx_int8_linear_available();
at::Tensor amx_int8_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                              c10::optional<at::Tensor> bias,
                              c10::optional<at::Tensor> out = c10::nullopt);
// A gated projection w [2I, K] = [gate; up] (bf16 or int8) packed for amx_gated_linear: gate
// block j then up block j (16 outputs each) in amx_pack_weight's layout.
at::Tensor amx_pack_gated(at::Tensor w);
// x @ w.T [* scale] + bias over amx_pack_gated's weights (int8 ones with their scale [2I], bf16
// ones without): y [M, 2I] in order, or SiLU(gate) * up [M, I] with silu_mul.
at::Tensor amx_gated_linear(at::Tensor x, at::Tensor packed, c10::optional<at::Tensor> scale,
                               c10::optional<at::Tensor> bias, bool silu_mul,
                               c10::optional<at::Tensor> out = c10::nullopt);
bool vnni_int8_linear_available();
at::Tensor vnni_pack_weight(at::Tensor w);
at::Tensor vnni_int8_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                               c10::optional<at::Tensor> bias,
                               c10::optional<at::Tensor> out = c10::nullopt);
// A gated projection w [2I, K] = [gate; up] packed as tasks of (gate tile, up tile), and its
// linear: [M, 2I] as vnni_int8_linear, or with silu_mul SiLU(gate) * up [M, I], bit for bit
// silu_and_mul of the former. scale and bias stay [2I] in w's order.
at::Tensor vnni_pack_gated(at::Tensor w);
at::Tensor vnni_int8_gated_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                                     c10::optional<at::Tensor> bias, bool silu_mul,
                                     c10::optional<at::Tensor> out = c10::nullopt);
bool dpbf16_linear_available();
at::Tensor dpbf16_pack_weight(at::Tensor w);
at::Tensor dpbf16_linear(at::Tensor x, at::Tensor packed,
                            c10::optional<at::Tensor> bias,
                            c10::optional<at::Tensor> out = c10::nullopt);
// The same for bf16 weights on AVX512-BF16 (dpbf16_linear's products).
at::Tensor dpbf16_pack_gated(at::Tensor w);
at::Tensor dpbf16_gated_linear(at::Tensor x, at::Tensor packed,
                                  c10::optional<at::Tensor> bias, bool silu_mul,
                                  c10::optional<at::Tensor> out = c10::nullopt);
// The thread of one region (`pieces_per_share` as in_one_region's) that ran each index of
// parallel_for(0, n, grain) [n]: thread `stalled_thread` holds its first chunk until the others
// ran every other index, and they wait for it to hold one (10 s at most): the tests' view of how
// a region shares a loop (parallel.h).
at::Tensor region_loop_threads(int64_t n, int64_t grain, int64_t pieces_per_share,
                                  int64_t stalled_thread);
// Nanoseconds per loop that one region hands to its threads (two threads' shares of nothing,
// `loops` of them after as many untimed): what each of a step's ~150 loops pays to go between
// the cores: on the AMD host ~0.15 µs where its two CPUs share a core complex, ~0.6-0.85 µs
// where they do not (BENCHMARKS.md, session 45). NaN where no region runs (one thread, more threads than CPUs).
double region_handoff_ns(int64_t loops);
}  // namespace roseinfer
