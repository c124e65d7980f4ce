import os, sys, time, statistics, torch
from torch.utils.cpp_extension import load
src = "/work/main/roseinfer/kernels"
exts={}
for var in sys.argv[1].split(","):
    d=f"/tmp/gemvbuild_acc{var}"; os.makedirs(d, exist_ok=True)
    open(f"{d}/b.cpp","w").write(open("/tmp/gemvbuild/b.cpp").read())
    exts[var] = load(f"gemv_acc{var}", [f"{d}/b.cpp", f"{src}/int8_linear.cpp"], extra_cflags=["-O3","-march=native","-fopenmp", f"-I{src}", f"-DKACC={var}"], extra_ldflags=["-fopenmp"], build_directory=d)
H,I,KV,L=576,1536,192,30
shapes=[(H+2*KV,H),(H,H),(2*I,H),(H,I)]
W={torch.bfloat16: [(torch.randn(n,k,dtype=torch.bfloat16)*0.02) for _ in range(L) for n,k in shapes]}
Q=[torch.randint(-127,128,(n,k),dtype=torch.int8) for _ in range(L) for n,k in shapes]
sc={n: torch.rand(n)*0.01 for n,_ in shapes}
Q2=Q[:4]  # L2-ish resident: one layer
for M in (1,2):
    xs={(k,dt): torch.randn(M,k).to(dt) for k in (H,I) for dt in (torch.float32, torch.bfloat16)}
    res={}
    for rep in range(15):
        for var,ext in exts.items():
            for name, ws, f in (("bf16", W[torch.bfloat16], lambda x,w: ext.small_batch_linear(x,w)),
                                ("int8", Q, lambda x,w: ext.int8_linear(x,w,sc[w.shape[0]])),
                                ("int8-1layer-x30", Q2*30, lambda x,w: ext.int8_linear(x,w,sc[w.shape[0]]))):
                t=time.perf_counter()
                for w in ws: f(xs[(w.shape[1], torch.float32 if w.dtype==torch.int8 else w.dtype)], w)
                res.setdefault((var,name),[]).append(time.perf_counter()-t)
    for var in exts:
        print(f"M={M} kacc={var}", "  ".join(f"{n}: {statistics.median(res[(var,n)][1:])*1e3:.2f}" for n in ("bf16","int8","int8-1layer-x30")), flush=True)
