// Python bindings of the CPU kernels (one extension module: `roseinfer.kernels.load_cpu_kernels`).
#include <torch/extension.h>

namespace roseinfer {
torch::Tensor paged_decode_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                                     torch::Tensor k_cache, torch::Tensor v_cache,
                                     torch::Tensor slot_mapping, torch::Tensor block_tables,
                                     torch::Tensor context_lens, int64_t block_size, double scale);
torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps);
torch::Tensor add_rms_norm(torch::Tensor x, torch::Tensor residual, torch::Tensor weight,
                           double eps);
void rotary_embedding(torch::Tensor q, torch::Tensor k, torch::Tensor cos, torch::Tensor sin);
torch::Tensor silu_and_mul(torch::Tensor x);
}  // namespace roseinfer

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("paged_decode_attention", &roseinfer::paged_decode_attention,
        "Decode attention over the paged KV cache; writes the new tokens' K/V first");
  m.def("rms_norm", &roseinfer::rms_norm, "RMSNorm of rows [N, n]");
  m.def("add_rms_norm", &roseinfer::add_rms_norm,
        "residual += x in place, then RMSNorm of the new residual");
  m.def("rotary_embedding", &roseinfer::rotary_embedding,
        "rotate-half rotary embedding of q and k, in place");
  m.def("silu_and_mul", &roseinfer::silu_and_mul, "silu(gate) * up of x = [gate | up]");
}
