import time, torch, torch.nn.functional as F
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
w = torch.randn(3072, 576).half(); 
for m in (1, 8, 64, 512):
    x = torch.randn(m, 576).half()
    def t(f):
        f(); s=time.perf_counter()
        for _ in range(5): f()
        return (time.perf_counter()-s)/5*1e3
    print(m, f"aten fp16 {t(lambda: F.linear(x, w)):.2f} ms  kernel {t(lambda: k.small_batch_linear(x, w)):.2f} ms")
