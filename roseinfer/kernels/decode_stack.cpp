// A Llama-family decoder stack for decode steps in one call: the same kernels the model's
// modules call, in the same order, without ~20 Python calls and module dispatches per layer
// (≈ 2 ms per step, three times the attention at batch 1: BENCHMARKS.md). Small prefill steps
// come too, their tokens attending one query each through the decode kernel; larger ones and
// `--enforce-eager` keep the PyTorch modules.
#include "decode_stack.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstring>

#include "ops.h"
#include "parallel.h"

namespace roseinfer {

DecodeLinear::DecodeLinear(std::string kind, at::Tensor weight,
                           c10::optional<at::Tensor> scale, c10::optional<at::Tensor> bias,
                           int64_t kernel_rows, c10::optional<at::Tensor> packed,
                           const DecodeLinear* few_rows)
    : weight_(std::move(weight)),
      scale_(std::move(scale)),
      bias_(std::move(bias)),
      packed_(std::move(packed)),
      kernel_rows_(kernel_rows),
      few_rows_(few_rows ? std::make_shared<const DecodeLinear>(*few_rows) : nullptr) {
  TORCH_CHECK(
      !packed_.has_value() || (kind == "small_batch" && weight_.scalar_type() == at::kFloat),
      "DecodeLinear: only small_batch with an fp32 weight takes a packed copy");
  if (kind == "amx") {
    kind_ = Kind::kAmx;
  } else if (kind == "amx_gated") {
    kind_ = Kind::kAmxGated;
  } else if (kind == "int8" || kind == "amx_int8" || kind == "amx_int8_gated" ||
             kind == "vnni_int8" || kind == "vnni_int8_gated") {
    TORCH_CHECK(scale_.has_value(), "DecodeLinear: ", kind, " needs a scale");
    kind_ = kind == "int8"             ? Kind::kInt8
            : kind == "amx_int8"       ? Kind::kAmxInt8
            : kind == "amx_int8_gated" ? Kind::kAmxInt8Gated
            : kind == "vnni_int8"      ? Kind::kVnniInt8
                                       : Kind::kVnniInt8Gated;
  } else if (kind == "dpbf16") {
    kind_ = Kind::kDpbf16;
  } else if (kind == "dpbf16_gated") {
    kind_ = Kind::kDpbf16Gated;
  } else if (kind == "small_batch") {
    kind_ = Kind::kSmallBatch;
  } else if (kind == "dense") {
    kind_ = Kind::kDense;
  } else {
    TORCH_CHECK(false, "DecodeLinear: unknown kind ", kind);
  }
  // The packed kinds keep [N / 16, ...] tiles of 16 outputs; the others the [N, K] weight.
  const bool packed_tiles = kind_ != Kind::kInt8 && kind_ != Kind::kSmallBatch &&
                            kind_ != Kind::kDense;
  out_features_ = weight_.size(0) * (packed_tiles ? 16 : 1);
  if (few_rows_) {
    TORCH_CHECK(kind_ != Kind::kInt8 && kind_ != Kind::kSmallBatch,
                "DecodeLinear: ", kind, " keeps kernel_rows for itself; it takes no few_rows");
    TORCH_CHECK(few_rows_->out_features() == out_features_ &&
                    few_rows_->own_kernel_rows() >= kernel_rows_,
                "DecodeLinear: few_rows must give the same ", out_features_,
                " outputs by a kernel of ours up to kernel_rows rows");
  }
}

at::Tensor DecodeLinear::operator()(const at::Tensor& x,
                                       const c10::optional<at::Tensor>& out) const {
  if (few_rows_ && x.size(0) <= kernel_rows_) return (*few_rows_)(x, out);
  switch (kind_) {
    case Kind::kAmx: return amx_linear(x, weight_, bias_, out);
    case Kind::kInt8:
      if (x.size(0) <= kernel_rows_) return int8_linear(x, weight_, *scale_, bias_, out);
      return into(out, fp32_linear(x, int8_dequantize(weight_, *scale_)));
    case Kind::kAmxGated: return amx_gated_linear(x, weight_, c10::nullopt, bias_, false, out);
    case Kind::kAmxInt8: return amx_int8_linear(x, weight_, *scale_, bias_, out);
    case Kind::kAmxInt8Gated: return amx_gated_linear(x, weight_, scale_, bias_, false, out);
    case Kind::kVnniInt8: return vnni_int8_linear(x, weight_, *scale_, bias_, out);
    case Kind::kVnniInt8Gated:
      return vnni_int8_gated_linear(x, weight_, *scale_, bias_, false, out);
    case Kind::kDpbf16: return dpbf16_linear(x, weight_, bias_, out);
    case Kind::kDpbf16Gated: return dpbf16_gated_linear(x, weight_, bias_, false, out);
    case Kind::kSmallBatch:
      if (x.size(0) <= kernel_rows_) return small_batch_linear(x, weight_, bias_, out);
      if (packed_.has_value()) return into(out, onednn_linear(x));
      return into(out, fp32_linear(x, weight_.to(at::kFloat)));
    case Kind::kDense: break;
  }
  return into(out, at::linear(x, weight_, bias_));
}

at::Tensor DecodeLinear::silu_mul(const at::Tensor& x,
                                     const c10::optional<at::Tensor>& out) const {
  if (few_rows_ && x.size(0) <= kernel_rows_) return few_rows_->silu_mul(x, out);
  // The epilogue saves a pass over [M, 2I] and its write: BENCHMARKS.md, session 29.
  if (kind_ == Kind::kVnniInt8Gated)
    return vnni_int8_gated_linear(x, weight_, *scale_, bias_, true, out);
  if (kind_ == Kind::kDpbf16Gated) return dpbf16_gated_linear(x, weight_, bias_, true, out);
  if (kind_ == Kind::kAmxGated) return amx_gated_linear(x, weight_, c10::nullopt, bias_, true, out);
  if (kind_ == Kind::kAmxInt8Gated) return amx_gated_linear(x, weight_, scale_, bias_, true, out);
  return silu_and_mul((*this)(x), out);
}

// The paths of aten, MKL and oneDNN (many rows) allocate their own output: copied into `out`
// where one is given, checked as the kernels check theirs.
at::Tensor DecodeLinear::into(const c10::optional<at::Tensor>& out, at::Tensor y) {
  if (!out.has_value()) return y;
  return output_tensor(out, y.sizes(), y.options(), y, "DecodeLinear").copy_(y);
}

int64_t DecodeLinear::own_kernel_rows() const {
  switch (kind_) {
    case Kind::kInt8:
    case Kind::kSmallBatch: return kernel_rows_;
    case Kind::kDense: return 0;
    default: return std::numeric_limits<int64_t>::max();
  }
}

// Many rows of x (prefill chunks) against a weight the kernels stream row by row: aten's fp32
// linear (MKL's sgemm) on the weight widened for this call. Where the kernels have no AMX, AVX-512
// or VNNI path, sgemm's blocking beats them from ~128 rows, and aten's own bf16 matmul is far
// slower than both (BENCHMARKS.md, sessions 12 and 13). fp32 weights and x are used as they are.
at::Tensor DecodeLinear::fp32_linear(const at::Tensor& x, const at::Tensor& weight) const {
  c10::optional<at::Tensor> bias;
  if (bias_.has_value()) bias = bias_->to(at::kFloat);
  return at::linear(x.to(at::kFloat), weight, bias).to(x.scalar_type());
}

// Many rows of fp32 x against the weight oneDNN packed once: its matmul beats sgemm from ~64 rows
// on AVX2 (BENCHMARKS.md, session 23). The op has no C++ API, so it goes through the dispatcher.
at::Tensor DecodeLinear::onednn_linear(const at::Tensor& x) const {
  static const c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow("mkldnn::_linear_pointwise", "");
  torch::jit::Stack stack{x,
                          *packed_,
                          bias_.has_value() ? c10::IValue(*bias_) : c10::IValue(),
                          c10::IValue(std::string("none")),
                          c10::IValue(c10::List<c10::optional<at::Scalar>>()),
                          c10::IValue()};
  op.callBoxed(&stack);
  return stack[0].toTensor();
}

DecodeStack::DecodeStack(at::Tensor embedding, std::vector<DecodeLayer> layers,
                         at::Tensor final_norm, double eps, int64_t num_heads,
                         int64_t num_kv_heads, int64_t head_dim, double scale)
    : embedding_(std::move(embedding)),
      layers_(std::move(layers)),
      final_norm_(std::move(final_norm)),
      eps_(eps),
      num_heads_(num_heads),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      scale_(scale),
      one_region_rows_(std::numeric_limits<int64_t>::max()) {
  TORCH_CHECK(!layers_.empty(), "DecodeStack: no layers");
  for (const DecodeLayer& layer : layers_)
    for (const DecodeLinear* linear :
         {&layer.qkv, &layer.o_proj, &layer.gate_up_proj, &layer.down_proj})
      one_region_rows_ = std::min(one_region_rows_, linear->own_kernel_rows());
  TORCH_CHECK(embedding_.dim() == 2 && embedding_.is_contiguous() &&
                  embedding_.scalar_type() == final_norm_.scalar_type() &&
                  embedding_.size(1) == final_norm_.numel(),
              "DecodeStack: the embedding must be a contiguous [vocab, hidden] in the norms' "
              "dtype");
}

namespace {

// The rows of table [R, W] at `index` [N] (int64, each checked to lie in [0, R)) as a new
// [N, W]: a copy per row, where index_select's PyTorch op costs tens of µs once a step's
// weights have evicted its code (BENCHMARKS.md, session 28).
at::Tensor take_rows(const at::Tensor& table, const at::Tensor& index, const char* what) {
  TORCH_CHECK(index.dim() == 1 && index.scalar_type() == at::kLong && index.is_contiguous(),
              "DecodeStack: ", what, " indices must be a contiguous int64 [N]");
  TORCH_CHECK(table.dim() == 2 && table.is_contiguous(), "DecodeStack: ", what,
              " table must be a contiguous [rows, width]");
  const int64_t n = index.numel(), rows = table.size(0);
  const int64_t row_bytes = table.size(1) * static_cast<int64_t>(table.element_size());
  at::Tensor out = at::empty({n, table.size(1)}, table.options());
  const int64_t* ids = index.data_ptr<int64_t>();
  const char* src = static_cast<const char*>(table.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(ids[i] >= 0 && ids[i] < rows, "DecodeStack: ", what, " index ", ids[i],
                " out of range [0, ", rows, ")");
    std::memcpy(dst + i * row_bytes, src + ids[i] * row_bytes, row_bytes);
  }
  return out;
}

}  // namespace

at::Tensor DecodeStack::forward(at::Tensor input_ids, at::Tensor positions,
                                   at::Tensor cos_table, at::Tensor sin_table,
                                   std::vector<at::Tensor> k_caches,
                                   std::vector<at::Tensor> v_caches,
                                   std::vector<at::Tensor> k_scales,
                                   std::vector<at::Tensor> v_scales,
                                   at::Tensor slot_mapping, at::Tensor block_tables,
                                   at::Tensor context_lens) const {
  auto run = [&] {
    return layers_forward(input_ids, positions, cos_table, sin_table, k_caches, v_caches,
                          k_scales, v_scales, slot_mapping, block_tables, context_lens);
  };
  const int64_t rows = input_ids.numel();
  if (rows > one_region_rows_) return run();
  // From 16 rows a loop lasts long enough that pieces of a share taken from a thread whose CPU
  // another process took win back more than they cost: a 32-row step disturbed 6 % of the time
  // lost 14 % with whole shares, 10-11 % with 8 pieces; a one-row step gained nothing from them
  // and paid ~1 % (BENCHMARKS.md, session 36).
  constexpr int64_t kPiecedRows = 16;
  at::Tensor out;
  in_one_region([&] { out = run(); }, rows >= kPiecedRows ? 8 : 1);
  return out;
}

at::Tensor DecodeStack::layers_forward(
    const at::Tensor& input_ids, const at::Tensor& positions,
    const at::Tensor& cos_table, const at::Tensor& sin_table,
    const std::vector<at::Tensor>& k_caches, const std::vector<at::Tensor>& v_caches,
    const std::vector<at::Tensor>& k_scales, const std::vector<at::Tensor>& v_scales,
    const at::Tensor& slot_mapping, const at::Tensor& block_tables,
    const at::Tensor& context_lens) const {
  const int64_t num_layers = static_cast<int64_t>(layers_.size());
  TORCH_CHECK(positions.numel() == input_ids.numel(), "DecodeStack: one position per token");
  TORCH_CHECK(cos_table.sizes() == sin_table.sizes() && cos_table.dim() == 2 &&
                  cos_table.size(1) * 2 == head_dim_,
              "DecodeStack: cos and sin must be [max_positions, head_dim / 2]");
  const at::Tensor hidden = take_rows(embedding_, input_ids, "token");  // [N, hidden]
  const at::Tensor cos = take_rows(cos_table, positions, "position");  // [N, D/2]
  const at::Tensor sin = take_rows(sin_table, positions, "position");
  TORCH_CHECK(static_cast<int64_t>(k_caches.size()) == num_layers &&
                  static_cast<int64_t>(v_caches.size()) == num_layers,
              "DecodeStack: one K and one V cache per layer");
  const bool scaled = !k_scales.empty();
  TORCH_CHECK(k_scales.size() == v_scales.size() &&
                  (!scaled || static_cast<int64_t>(k_scales.size()) == num_layers),
              "DecodeStack: one K and one V scale tensor per layer (int8 caches), or none");
  const int64_t rows = hidden.size(0), width = hidden.size(1);
  const int64_t q_size = num_heads_ * head_dim_, kv_size = num_kv_heads_ * head_dim_;
  // The step's activations, each written by one op and read by the next, in buffers every layer
  // reuses: a one-row step allocating each op's output spent 2-5 % of its time on ~200 tensors
  // (BENCHMARKS.md, session 34).
  auto buffer = [&](std::initializer_list<int64_t> sizes) {
    return at::empty(sizes, hidden.options());
  };
  const at::Tensor normed = buffer({rows, width});  // the norms' outputs
  const at::Tensor qkv = buffer({rows, layers_[0].qkv.out_features()});  // [B, q + 2 kv]
  const at::Tensor attn = buffer({rows, num_heads_, head_dim_});
  const at::Tensor attn_rows = attn.view({rows, q_size});  // o_proj's input
  const at::Tensor projected = buffer({rows, width});  // o_proj's and down_proj's outputs
  const at::Tensor gated = buffer({rows, layers_[0].gate_up_proj.out_features() / 2});
  // As LlamaDecoderLayer: the embedding output is the first residual, handed over (the fused
  // norms add into the residual in place).
  const at::Tensor& residual = hidden;
  for (int64_t i = 0; i < num_layers; ++i) {
    const DecodeLayer& layer = layers_[i];
    if (i == 0)
      rms_norm(residual, layer.input_norm, eps_, normed);
    else
      add_rms_norm(projected, residual, layer.input_norm, eps_, normed);
    layer.qkv(normed, qkv);
    const c10::optional<at::Tensor> k_scale =
        scaled ? c10::optional<at::Tensor>(k_scales[i]) : c10::nullopt;
    const c10::optional<at::Tensor> v_scale =
        scaled ? c10::optional<at::Tensor>(v_scales[i]) : c10::nullopt;
    if (layer.q_norm.defined()) {  // as the modules: the norms make q and k contiguous copies
      auto heads = [&](int64_t offset, int64_t size, int64_t n) {
        return qkv.narrow(1, offset, size).view({rows, n, head_dim_});
      };
      const at::Tensor q = rms_norm(heads(0, q_size, num_heads_), layer.q_norm, eps_);
      const at::Tensor k = rms_norm(heads(q_size, kv_size, num_kv_heads_), layer.k_norm, eps_);
      rotary_embedding(q, k, cos, sin);
      paged_decode_attention(q, k, heads(q_size + kv_size, kv_size, num_kv_heads_), k_caches[i],
                             v_caches[i], slot_mapping, block_tables, context_lens, scale_,
                             k_scale, v_scale, attn);
    } else {  // q, k and v read from qkv's rows in place, rotated on the way
      paged_decode_attention_qkv(qkv, cos, sin, num_heads_, k_caches[i], v_caches[i],
                                 slot_mapping, block_tables, context_lens, scale_, k_scale,
                                 v_scale, attn);
    }
    layer.o_proj(attn_rows, projected);
    add_rms_norm(projected, residual, layer.post_norm, eps_, normed);
    layer.gate_up_proj.silu_mul(normed, gated);
    layer.down_proj(gated, projected);
  }
  return add_rms_norm(projected, residual, final_norm_, eps_);
}

}  // namespace roseinfer
