import os, sys, time, statistics, torch
from torch.utils.cpp_extension import load
src = "/work/main/roseinfer/kernels"
exts={}
for var in sys.argv[1].split(","):
    rowpass, rpp = var.split("_")
    d=f"/tmp/gemvbuild_{var}"; os.makedirs(d, exist_ok=True)
    open(f"{d}/b.cpp","w").write(open("/tmp/gemvbuild/b.cpp").read())
    exts[var] = load(f"gemv_{var}", [f"{d}/b.cpp", f"{src}/int8_linear.cpp"], extra_cflags=["-O3","-march=native","-fopenmp", f"-I{src}", f"-DROWPASS={rowpass}", f"-DRPP={rpp}"], extra_ldflags=["-fopenmp"], build_directory=d)
H,I,KV,L=576,1536,192,30
shapes=[(H+2*KV,H),(H,H),(2*I,H),(H,I)]
Ms=[int(m) for m in sys.argv[2].split(",")]
W={dt: [(torch.randn(n,k,dtype=dt)*0.02) for _ in range(L) for n,k in shapes] for dt in (torch.float32, torch.bfloat16)}
Q=[torch.randint(-127,128,(n,k),dtype=torch.int8) for _ in range(L) for n,k in shapes]
sc={n: torch.rand(n)*0.01 for n,_ in shapes}
for M in Ms:
    xs={(k,dt): torch.randn(M,k).to(dt) for k in (H,I) for dt in (torch.float32, torch.bfloat16)}
    res={}
    for rep in range(int(os.environ.get("REPS", 7))):
        for var,ext in exts.items():
            for name, ws, f in (("fp32", W[torch.float32], lambda x,w: ext.small_batch_linear(x,w)),
                                ("bf16", W[torch.bfloat16], lambda x,w: ext.small_batch_linear(x,w)),
                                ("int8", Q, lambda x,w: ext.int8_linear(x,w,sc[w.shape[0]]))):
                t=time.perf_counter()
                for w in ws: f(xs[(w.shape[1], torch.float32 if w.dtype==torch.int8 else w.dtype)], w)
                res.setdefault((var,name),[]).append(time.perf_counter()-t)
    for var in exts:
        print(f"M={M} {var}", "  ".join(f"{n}: {statistics.median(res[(var,n)][1:])*1e3:.1f}" for n in ("fp32","bf16","int8")), flush=True)
