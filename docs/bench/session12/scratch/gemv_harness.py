import os, sys, time, statistics, torch
from torch.utils.cpp_extension import load
src = "/work/main/roseinfer/kernels"
os.makedirs("/tmp/gemvbuild", exist_ok=True)
open("/tmp/gemvbuild/b.cpp","w").write('''
#include <torch/extension.h>
namespace roseinfer {
torch::Tensor int8_linear(torch::Tensor x, torch::Tensor weight, torch::Tensor scale, c10::optional<torch::Tensor> bias);
torch::Tensor small_batch_linear(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("int8_linear", &roseinfer::int8_linear, py::arg("x"), py::arg("w"), py::arg("s"), py::arg("b")=py::none());
  m.def("small_batch_linear", &roseinfer::small_batch_linear, py::arg("x"), py::arg("w"), py::arg("b")=py::none());
}''')
ext = load("gemv_h", ["/tmp/gemvbuild/b.cpp", f"{src}/int8_linear.cpp"], extra_cflags=["-O3","-march=native","-fopenmp", f"-I{src}"], extra_ldflags=["-fopenmp"], build_directory="/tmp/gemvbuild", verbose=False)
torch.manual_seed(0)
for dt in (torch.float32, torch.bfloat16, torch.float16):
  for M in (1,3,4,5,8,9):
    K,N=576,960
    x=torch.randn(M,K,dtype=dt); w=torch.randn(N,K,dtype=dt)*0.05; b=torch.randn(N,dtype=dt)
    got=ext.small_batch_linear(x,w,b); ref=(x.double()@w.double().T+b.double())
    e=(got.double()-ref).abs().max().item()
    q=torch.randint(-127,128,(N,K),dtype=torch.int8); s=torch.rand(N,dtype=dt)*0.01
    g2=ext.int8_linear(x,q,s,b); r2=(x.double()@q.double().T)*s.double()+b.double()
    e2=(g2.double()-r2).abs().max().item()
    print(dt, M, f"{e:.2e} {e2:.2e}")
import torch.nn.functional as F
H,I,KV,L=576,1536,192,30
shapes=[(H+2*KV,H),(H,H),(2*I,H),(H,I)]
def weights(dt):
    return [(torch.randn(n,k,dtype=dt)*0.02) for _ in range(L) for n,k in shapes]
def run(f, ws, M, K0=H):
    xs={k: torch.randn(M,k) for k in (H,I)}
    def step():
        for w in ws: f(xs[w.shape[1]].to(w.dtype) if w.dtype!=torch.int8 else xs[w.shape[1]], w)
    step(); ts=[]
    for _ in range(7):
        t=time.perf_counter(); step(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1e3
for M in (1,4,8,16,32):
    res=[]
    for dt in (torch.float32, torch.bfloat16):
        ws=weights(dt)
        res.append((f"{dt} F.linear", run(lambda x,w: F.linear(x,w), ws, M)))
        res.append((f"{dt} kernel", run(lambda x,w: ext.small_batch_linear(x,w), ws, M)))
        del ws
    qs=[torch.randint(-127,128,(n,k),dtype=torch.int8) for _ in range(L) for n,k in shapes]
    sc={n: torch.rand(n)*0.01 for n,_ in shapes}
    res.append(("int8 kernel fp32 x", run(lambda x,w: ext.int8_linear(x,w,sc[w.shape[0]]), qs, M)))
    print(M, "  ".join(f"{n}: {t:.1f}" for n,t in res), flush=True)
