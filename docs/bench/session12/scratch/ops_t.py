import time, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
def t(f, n=3000):
    f(); best=1e9
    for _ in range(5):
        s=time.perf_counter()
        for _ in range(n): f()
        best=min(best,(time.perf_counter()-s)/n)
    return best*1e6
x=torch.randn(1,576); r=torch.randn(1,576); w=torch.ones(576)
print("rms_norm", t(lambda: k.rms_norm(x,w,1e-5)))
print("add_rms_norm", t(lambda: k.add_rms_norm(x,r,w,1e-5)))
g=torch.randn(1,3072)
print("silu_and_mul", t(lambda: k.silu_and_mul(g)))
q=torch.randn(1,960); 
print("empty", t(lambda: torch.empty(1,576)))
q8=torch.randint(-100,100,(64,576),dtype=torch.int8); sc=torch.rand(64)
print("int8_linear 64x576", t(lambda: k.int8_linear(x,q8,sc)))
q8=torch.randint(-100,100,(576,576),dtype=torch.int8); sc=torch.rand(576)
print("int8_linear 576x576 (L2-resident)", t(lambda: k.int8_linear(x,q8,sc)))
