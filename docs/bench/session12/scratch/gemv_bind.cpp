
#include <torch/extension.h>
namespace roseinfer {
torch::Tensor int8_linear(torch::Tensor x, torch::Tensor weight, torch::Tensor scale, c10::optional<torch::Tensor> bias);
torch::Tensor small_batch_linear(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("int8_linear", &roseinfer::int8_linear, py::arg("x"), py::arg("w"), py::arg("s"), py::arg("b")=py::none());
  m.def("small_batch_linear", &roseinfer::small_batch_linear, py::arg("x"), py::arg("w"), py::arg("b")=py::none());
}