import torch, time
from torch.utils.cpp_extension import load
e=load("st",["/tmp/st/st.cpp"],extra_cflags=["-O3","-march=native","-fopenmp"],extra_ldflags=["-fopenmp"],build_directory="/tmp/st")
N,K=3072,576
ws=[torch.randint(-100,100,(N,K),dtype=torch.int8) for _ in range(40)]
ps=[w.view(N//4,4,K//8,8).transpose(1,2).contiguous().view(N//4,K*4) for w in ws]
x=torch.randn(K)
assert torch.allclose(e.A(x,ws[0],8), e.B(x,ps[0],0), rtol=1e-4, atol=1e-2)
def t(f):
    f(); best=1e9
    for _ in range(5):
        s=time.perf_counter(); [f() for _ in range(10)]; best=min(best,(time.perf_counter()-s)/10)
    return 40*N*K/best/1e9
for pf in (0,16,32,64):
    print("C pf",pf, f"{t(lambda: [e.C(x,p,pf) for p in ps]):.1f} GB/s")
    print("D pf",pf, f"{t(lambda: [e.D(x,w,pf) for w in ws]):.1f} GB/s")
    print("A pf",pf//4, f"{t(lambda: [e.A(x,w,pf//4) for w in ws]):.1f} GB/s")
