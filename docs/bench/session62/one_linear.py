import time, torch, sys
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.set_num_threads(int(sys.argv[1]))
M,N,K = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
w = k.dpbf16_pack_weight((torch.randn(N, K)*0.02).bfloat16())
x = torch.randn(M, K).bfloat16(); out = torch.empty(M, N, dtype=torch.bfloat16)
reps = int(sys.argv[5])
a=time.perf_counter()
for _ in range(reps): k.dpbf16_linear(x, w, None, out)
t=(time.perf_counter()-a)/reps
print(f"{t*1e6:.1f} us {2*M*N*K/t/1e9:.1f} GF/s")
