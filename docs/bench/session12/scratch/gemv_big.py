exec(open("/tmp/gemv_harness.py").read().split("torch.manual_seed(0)")[0])
import torch.nn.functional as F, time, statistics
H,I,KV,L=576,1536,192,6
shapes=[(H+2*KV,H),(H,H),(2*I,H),(H,I)]
def run(f, ws, M):
    xs={k: torch.randn(M,k) for k in (H,I)}
    xs={(k,dt): xs[k].to(dt) for k in (H,I) for dt in (torch.float32, torch.bfloat16)}
    def step():
        for w in ws: f(xs[(w.shape[1], torch.float32 if w.dtype==torch.int8 else w.dtype)], w)
    step(); ts=[]
    for _ in range(5):
        t=time.perf_counter(); step(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1e3*30/L
for M in (32, 48, 64, 128, 256, 512):
    res=[]
    for dt in (torch.float32, torch.bfloat16):
        ws=[(torch.randn(n,k,dtype=dt)*0.02) for _ in range(L) for n,k in shapes]
        res.append((f"{dt} F.linear", run(lambda x,w: F.linear(x,w), ws, M)))
        res.append((f"{dt} kernel", run(lambda x,w: ext.small_batch_linear(x,w), ws, M)))
    qs=[torch.randint(-127,128,(n,k),dtype=torch.int8) for _ in range(L) for n,k in shapes]
    sc={n: torch.rand(n)*0.01 for n,_ in shapes}
    res.append(("int8 kernel", run(lambda x,w: ext.int8_linear(x,w,sc[w.shape[0]]), qs, M)))
    print(M, "  ".join(f"{n}: {t:.1f}" for n,t in res), flush=True)
