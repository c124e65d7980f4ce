// Python bindings of the CPU kernels (one extension module: `roseinfer.kernels.load_cpu_kernels`).
#include <torch/csrc/utils/pybind.h>

#include "decode_stack.h"
#include "ops.h"
#include "vec.h"

// The entries the decoder stack calls take `out=`: a contiguous tensor of the output's shape and
// dtype to write into (and return) instead of a new one.
// The attention and linear kernels run long enough (~0.1-0.3 ms) to hand the GIL to the HTTP thread; the
// others take microseconds, less than a GIL hand-off is worth.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("paged_decode_attention", &roseinfer::paged_decode_attention,
        "Decode attention over the paged KV cache; writes the new tokens' K/V first (int8 "
        "caches: quantized, with their scales)",
        py::arg("q"), py::arg("k"), py::arg("v"), py::arg("k_cache"), py::arg("v_cache"),
        py::arg("slot_mapping"), py::arg("block_tables"), py::arg("context_lens"),
        py::arg("scale"), py::arg("k_scale") = py::none(), py::arg("v_scale") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("paged_decode_attention_qkv", &roseinfer::paged_decode_attention_qkv,
        "paged_decode_attention over the rows of the fused qkv projection, rotating q and k on "
        "the way (the decoder stack's form, bound for the tests)",
        py::arg("qkv"), py::arg("cos"), py::arg("sin"), py::arg("num_heads"), py::arg("k_cache"),
        py::arg("v_cache"), py::arg("slot_mapping"), py::arg("block_tables"),
        py::arg("context_lens"), py::arg("scale"), py::arg("k_scale") = py::none(),
        py::arg("v_scale") = py::none(), py::arg("out") = py::none(),
        py::call_guard<py::gil_scoped_release>());
  m.def("rms_norm", &roseinfer::rms_norm, "RMSNorm of rows [N, n]", py::arg("x"),
        py::arg("weight"), py::arg("eps"), py::arg("out") = py::none());
  m.def("add_rms_norm", &roseinfer::add_rms_norm,
        "residual += x in place, then RMSNorm of the new residual", py::arg("x"),
        py::arg("residual"), py::arg("weight"), py::arg("eps"), py::arg("out") = py::none());
  m.def("rotary_embedding", &roseinfer::rotary_embedding,
        "rotate-half rotary embedding of q and k, in place");
  m.def("silu_and_mul", &roseinfer::silu_and_mul, "silu(gate) * up of x = [gate | up]",
        py::arg("x"), py::arg("out") = py::none());
  m.def("int8_linear", &roseinfer::int8_linear,
        "weight-only int8 linear: (x @ w.T) * scale + bias",
        py::arg("x"), py::arg("weight"), py::arg("scale"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("small_batch_linear", &roseinfer::small_batch_linear,
        "x @ w.T + bias streaming w once (w in x's dtype): for a few rows of x",
        py::arg("x"), py::arg("weight"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("int8_dequantize", &roseinfer::int8_dequantize,
        "weight [N, K] int8 * scale [N] per row, as fp32 [N, K]");
  m.def("vector_lanes", &roseinfer::vector_lanes,
        "fp32 lanes of small_batch_linear's and int8_linear's vector code: 16 (AVX-512), 8 "
        "(AVX2), 0 (scalar loops)");
  m.def("prefetch_once_pays", &roseinfer::prefetch_once_pays,
        "whether the linears ask for weights they read once as such (prefetchnta): on AMD CPUs, "
        "or as $ROSEINFER_PREFETCH_ONCE (nta, l2) says");
  m.def("bf16_pairs_by_fma", &roseinfer::bf16_pairs_by_fma,
        "whether dpbf16_linear takes its products by fp32 FMAs on widened weights, not by "
        "vdpbf16ps: on Intel CPUs, or as $ROSEINFER_BF16_PAIRS (dpbf16, fma) says");
  m.def("amx_linear_available", &roseinfer::amx_linear_available,
        "whether amx_linear runs here (built with AMX, and the OS grants the tile state)");
  m.def("amx_pack_weight", &roseinfer::amx_pack_weight,
        "bf16 or int8 w [N, K] in AMX tile layout [N/16, K/32, 16, 32], for amx_linear or "
        "amx_int8_linear");
  m.def("amx_linear", &roseinfer::amx_linear,
        "x @ w.T + bias for bf16 x [M, K], w packed by amx_pack_weight",
        py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("write_kv_cache", &roseinfer::write_kv_cache,
        "k, v [n, KVH, D] into their slots of the paged cache (an int8 cache's rows quantized, "
        "with their scales), as LayerCache.write",
        py::arg("k"), py::arg("v"), py::arg("k_cache"), py::arg("v_cache"),
        py::arg("slot_mapping"), py::arg("k_scale") = py::none(), py::arg("v_scale") = py::none(),
        py::call_guard<py::gil_scoped_release>());
  m.def("paged_prefill_attention", &roseinfer::paged_prefill_attention,
        "causal attention of a step's prefill chunks over the paged cache, keys read in place",
        py::arg("q"), py::arg("k_cache"), py::arg("v_cache"), py::arg("block_tables"),
        py::arg("query_start_loc"), py::arg("context_lens"), py::arg("scale"),
        py::arg("k_scale") = py::none(), py::arg("v_scale") = py::none(),
        py::arg("tile") = "auto", py::call_guard<py::gil_scoped_release>());
  m.def("paged_prefill_tile", &roseinfer::paged_prefill_tile,
        "the tile paged_prefill_attention takes for q and k_cache: amx, amx_emulated, pairs or "
        "fp32 (tile='auto': the one it picks), or an error saying why it cannot",
        py::arg("q"), py::arg("k_cache"), py::arg("tile") = "auto");
  m.def("argmax_rows", &roseinfer::argmax_rows,
        "(index, value) of each row's first maximum (or first NaN), as torch.max(dim=-1): "
        "int64 [B], fp32 [B]");
  m.def("apply_token_bitmask", &roseinfer::apply_token_bitmask,
        "-inf, in place, in logits row rows[i] where bit j of bitmask[i, w] is 0 (token 32w + j)",
        py::arg("logits"), py::arg("bitmask"), py::arg("rows"),
        py::call_guard<py::gil_scoped_release>());
  m.def("logsumexp_rows", &roseinfer::logsumexp_rows,
        "each row's log(sum(exp(row))) of logits [B, V]: fp32 [B]", py::arg("logits"),
        py::call_guard<py::gil_scoped_release>());
  m.def("count_greater_rows", &roseinfer::count_greater_rows,
        "how many of row r's logits exceed values[r] (fp32 [B]): int64 [B]", py::arg("logits"),
        py::arg("values"), py::call_guard<py::gil_scoped_release>());
  m.def("top_candidates_rows", &roseinfer::top_candidates_rows,
        "each row's m largest logits (fp32 [B, m]) and ids (int64 [B, m]), the larger first, "
        "equal logits by the lower id", py::arg("logits"), py::arg("m"),
        py::call_guard<py::gil_scoped_release>());
  m.def("sample_candidates_rows", &roseinfer::sample_candidates_rows,
        "each row's token drawn among its candidates by inverse CDF in token order: weights fp32 "
        "[C, m], ids int64 [C, m], u float64 [C] -> int64 [C]", py::arg("weights"), py::arg("ids"),
        py::arg("u"), py::call_guard<py::gil_scoped_release>());
  m.def("amx_int8_linear_available", &roseinfer::amx_int8_linear_available,
        "whether amx_int8_linear runs here (amx_linear's, and built with AVX512-BF16)");
  m.def("amx_int8_linear", &roseinfer::amx_int8_linear,
        "(x @ w.T) * scale + bias for bf16 x [M, K], int8 w packed by amx_pack_weight",
        py::arg("x"), py::arg("packed"), py::arg("scale"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("amx_pack_gated", &roseinfer::amx_pack_gated,
        "a gated projection's bf16 or int8 w [2I, K] = [gate; up] in amx_pack_weight's layout, "
        "gate block j then up block j (16 outputs each), for amx_gated_linear");
  m.def("amx_gated_linear", &roseinfer::amx_gated_linear,
        "amx_linear (bf16 weights, no scale) or amx_int8_linear (int8 weights and their scale) "
        "over amx_pack_gated's weights: [M, 2I], or with silu_mul SiLU(gate) * up [M, I] (bit "
        "for bit silu_and_mul of the former)",
        py::arg("x"), py::arg("packed"), py::arg("scale") = py::none(),
        py::arg("bias") = py::none(), py::arg("silu_mul") = false, py::arg("out") = py::none(),
        py::call_guard<py::gil_scoped_release>());
  m.def("vnni_int8_linear_available", &roseinfer::vnni_int8_linear_available,
        "whether vnni_int8_linear runs here (built with AVX512-VNNI)");
  m.def("vnni_pack_weight", &roseinfer::vnni_pack_weight,
        "int8 w [N, K] (values in [-127, 127]) plus 128 as uint8 [N/16, K/4, 16, 4] (16-output "
        "tiles, interleaved three at a time), for vnni_int8_linear");
  m.def("vnni_int8_linear", &roseinfer::vnni_int8_linear,
        "(x_q @ w.T) * scale + bias with x rounded to int8 per block of 64 inputs, int8 w "
        "packed by vnni_pack_weight",
        py::arg("x"), py::arg("packed"), py::arg("scale"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("vnni_pack_gated", &roseinfer::vnni_pack_gated,
        "a gated projection's int8 w [2I, K] = [gate; up] as vnni_pack_weight packs it, in tasks "
        "of gate tile j and up tile j, for vnni_int8_gated_linear");
  m.def("vnni_int8_gated_linear", &roseinfer::vnni_int8_gated_linear,
        "vnni_int8_linear over vnni_pack_gated's weights: [M, 2I], or with silu_mul "
        "SiLU(gate) * up [M, I] (bit for bit silu_and_mul of the former)",
        py::arg("x"), py::arg("packed"), py::arg("scale"), py::arg("bias") = py::none(),
        py::arg("silu_mul") = false, py::arg("out") = py::none(),
        py::call_guard<py::gil_scoped_release>());
  m.def("dpbf16_linear_available", &roseinfer::dpbf16_linear_available,
        "whether dpbf16_linear runs here (built with AVX512-BF16)");
  m.def("dpbf16_pack_weight", &roseinfer::dpbf16_pack_weight,
        "bf16 w [N, K] as [N/16, K/2, 16, 2] (pairs of inputs of 16 outputs; the tiles "
        "interleaved three at a time), for dpbf16_linear");
  m.def("dpbf16_linear", &roseinfer::dpbf16_linear,
        "x @ w.T + bias for bf16 x [M, K], w packed by dpbf16_pack_weight (vdpbf16ps)",
        py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(),
        py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>());
  m.def("dpbf16_pack_gated", &roseinfer::dpbf16_pack_gated,
        "a gated projection's bf16 w [2I, K] = [gate; up] as dpbf16_pack_weight packs it, in "
        "tasks of gate tile j and up tile j, for dpbf16_gated_linear");
  m.def("dpbf16_gated_linear", &roseinfer::dpbf16_gated_linear,
        "dpbf16_linear over dpbf16_pack_gated's weights: [M, 2I], or with silu_mul "
        "SiLU(gate) * up [M, I] (bit for bit silu_and_mul of the former)",
        py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(),
        py::arg("silu_mul") = false, py::arg("out") = py::none(),
        py::call_guard<py::gil_scoped_release>());
  m.def("region_loop_threads", &roseinfer::region_loop_threads,
        "the thread of one parallel region that ran each index of a loop over [0, n), one "
        "thread stalling in its first chunk (for the tests)",
        py::arg("n"), py::arg("grain"), py::arg("pieces_per_share"), py::arg("stalled_thread"),
        py::call_guard<py::gil_scoped_release>());
  m.def("region_handoff_ns", &roseinfer::region_handoff_ns,
        "nanoseconds per empty loop handed between one parallel region's threads (NaN without "
        "a region)",
        py::arg("loops") = 2000, py::call_guard<py::gil_scoped_release>());
  py::class_<roseinfer::DecodeLinear>(m, "DecodeLinear",
                                      "a linear layer's decode kernel and prepared weights")
      .def(py::init<std::string, at::Tensor, c10::optional<at::Tensor>,
                    c10::optional<at::Tensor>, int64_t, c10::optional<at::Tensor>,
                    const roseinfer::DecodeLinear*>(),
           py::arg("kind"), py::arg("weight"), py::arg("scale") = py::none(),
           py::arg("bias") = py::none(),
           py::arg("kernel_rows") = std::numeric_limits<int64_t>::max(),
           py::arg("packed") = py::none(), py::arg("few_rows") = nullptr)
      .def("__call__", &roseinfer::DecodeLinear::operator(), "y = the layer's kernel on x [M, K]",
           py::arg("x"), py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>())
      .def("silu_mul", &roseinfer::DecodeLinear::silu_mul,
           "SiLU(gate) * up [M, I] of a gated projection's y = [gate | up] [M, 2I]",
           py::arg("x"), py::arg("out") = py::none(), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("out_features", &roseinfer::DecodeLinear::out_features,
                             "N: the width of y");
  py::class_<roseinfer::DecodeLayer>(m, "DecodeLayer", "one decoder layer's decode weights")
      .def(py::init([](at::Tensor input_norm, at::Tensor post_norm,
                       roseinfer::DecodeLinear qkv, roseinfer::DecodeLinear o_proj,
                       roseinfer::DecodeLinear gate_up_proj, roseinfer::DecodeLinear down_proj,
                       c10::optional<at::Tensor> q_norm, c10::optional<at::Tensor> k_norm) {
             TORCH_CHECK(q_norm.has_value() == k_norm.has_value(),
                         "DecodeLayer: q_norm and k_norm come together");
             return roseinfer::DecodeLayer{input_norm, post_norm, qkv, o_proj, gate_up_proj,
                                           down_proj, q_norm.value_or(at::Tensor()),
                                           k_norm.value_or(at::Tensor())};
           }),
           py::arg("input_norm"), py::arg("post_norm"), py::arg("qkv"), py::arg("o_proj"),
           py::arg("gate_up_proj"), py::arg("down_proj"), py::arg("q_norm") = py::none(),
           py::arg("k_norm") = py::none());
  py::class_<roseinfer::DecodeStack>(m, "DecodeStack",
                                     "a Llama decoder stack for decode steps, one call per step")
      .def(py::init<at::Tensor, std::vector<roseinfer::DecodeLayer>, at::Tensor, double,
                    int64_t, int64_t, int64_t, double>(),
           py::arg("embedding"), py::arg("layers"), py::arg("final_norm"), py::arg("eps"),
           py::arg("num_heads"), py::arg("num_kv_heads"), py::arg("head_dim"), py::arg("scale"))
      .def("forward", &roseinfer::DecodeStack::forward, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("one_region_rows", &roseinfer::DecodeStack::one_region_rows,
                             "steps of up to this many tokens run in one parallel region");
}
