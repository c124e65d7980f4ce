// The decoder stack for steps that attend through the decode kernel (decode_stack.cpp),
// declared for the bindings.
#pragma once

#include "aten.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace roseinfer {

// One linear layer's decode kernel and its prepared weights: "amx" (weight packed by
// amx_pack_weight), "dpbf16" (bf16 weight packed by dpbf16_pack_weight), "int8" (int8 weight
// [N, K] and scale [N]; up to kernel_rows rows of x, aten's fp32 linear on the widened weight
// beyond), "amx_int8" (int8 weight packed by amx_pack_weight and scale [N]), "small_batch"
// (weight [N, K]; up to kernel_rows rows of x; beyond, oneDNN's matmul on `packed`, the fp32
// weight as torch.ops.mkldnn._reorder_linear_weight packs it, or without it aten's fp32 linear on
// the weight widened to fp32) or "dense" (an unpacked nn.Linear's weight [N, K]: aten's linear,
// as F.linear). "vnni_int8_gated", "dpbf16_gated", "amx_gated" and "amx_int8_gated": a gated
// projection [gate; up] packed by vnni_pack_gated / dpbf16_pack_gated / amx_pack_gated, whose
// `silu_mul` runs SiLU·mul in the linear's epilogue.
// Any kind but "int8" and "small_batch" may hand up to kernel_rows rows to `few_rows`, another
// layer's kernel over its own copy of the weights (AMX CPUs' int8: "vnni_int8" streams a decode
// step's weights at the floor, where widening AMX tiles is bound by the widening).
class DecodeLinear {
 public:
  DecodeLinear(std::string kind, at::Tensor weight, c10::optional<at::Tensor> scale,
               c10::optional<at::Tensor> bias,
               int64_t kernel_rows = std::numeric_limits<int64_t>::max(),
               c10::optional<at::Tensor> packed = c10::nullopt,
               const DecodeLinear* few_rows = nullptr);
  // y [M, N], into `out` where given (a contiguous [M, N] in x's dtype: the stack's step buffer).
  at::Tensor operator()(const at::Tensor& x,
                           const c10::optional<at::Tensor>& out = c10::nullopt) const;
  // silu_and_mul(operator()(x)) [M, N / 2] for a gated projection: in the epilogue where the kind
  // has one.
  at::Tensor silu_mul(const at::Tensor& x,
                         const c10::optional<at::Tensor>& out = c10::nullopt) const;
  // Rows of x up to which the layer runs a kernel of ours (beyond: aten, MKL or oneDNN).
  int64_t own_kernel_rows() const;
  int64_t out_features() const { return out_features_; }

 private:
  enum class Kind {
    kAmx, kAmxGated, kDpbf16, kDpbf16Gated, kInt8, kAmxInt8, kAmxInt8Gated, kVnniInt8,
    kVnniInt8Gated, kSmallBatch, kDense
  };
  at::Tensor fp32_linear(const at::Tensor& x, const at::Tensor& weight) const;
  static at::Tensor into(const c10::optional<at::Tensor>& out, at::Tensor y);
  at::Tensor onednn_linear(const at::Tensor& x) const;
  Kind kind_;
  at::Tensor weight_;
  c10::optional<at::Tensor> scale_, bias_, packed_;
  int64_t kernel_rows_;  // small_batch, int8: rows up to which the kernel runs; or few_rows_ runs
  std::shared_ptr<const DecodeLinear> few_rows_;
  int64_t out_features_;  // N
};

struct DecodeLayer {
  at::Tensor input_norm, post_norm;  // RMSNorm weights [hidden]
  DecodeLinear qkv, o_proj, gate_up_proj, down_proj;
  at::Tensor q_norm, k_norm;  // per-head RMSNorm weights [head_dim] (Qwen3), or undefined
};

class DecodeStack {
 public:
  DecodeStack(at::Tensor embedding, std::vector<DecodeLayer> layers, at::Tensor final_norm,
              double eps, int64_t num_heads, int64_t num_kv_heads, int64_t head_dim,
              double scale);
  // input_ids and positions [N] (int64), the rotary tables cos/sin [max_positions, D/2], each
  // layer's caches (and, for int8 caches, their scales; else empty lists), the decode kernel's
  // per-token indices: the final norm's output [N, hidden]. Writes each token's K/V into the
  // caches.
  at::Tensor forward(at::Tensor input_ids, at::Tensor positions,
                        at::Tensor cos_table, at::Tensor sin_table,
                        std::vector<at::Tensor> k_caches, std::vector<at::Tensor> v_caches,
                        std::vector<at::Tensor> k_scales, std::vector<at::Tensor> v_scales,
                        at::Tensor slot_mapping, at::Tensor block_tables,
                        at::Tensor context_lens) const;
  // Steps of up to this many tokens run in one parallel region (`in_one_region`): those whose
  // every linear runs a kernel of ours.
  int64_t one_region_rows() const { return one_region_rows_; }

 private:
  at::Tensor layers_forward(const at::Tensor& input_ids, const at::Tensor& positions,
                               const at::Tensor& cos_table, const at::Tensor& sin_table,
                               const std::vector<at::Tensor>& k_caches,
                               const std::vector<at::Tensor>& v_caches,
                               const std::vector<at::Tensor>& k_scales,
                               const std::vector<at::Tensor>& v_scales,
                               const at::Tensor& slot_mapping, const at::Tensor& block_tables,
                               const at::Tensor& context_lens) const;
  at::Tensor embedding_;  // [vocab, hidden]
  std::vector<DecodeLayer> layers_;
  at::Tensor final_norm_;
  double eps_;
  int64_t num_heads_, num_kv_heads_, head_dim_;
  double scale_;
  int64_t one_region_rows_;
};

}  // namespace roseinfer
