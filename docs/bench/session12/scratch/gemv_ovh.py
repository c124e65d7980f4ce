exec(open("/tmp/gemv_harness.py").read().split("torch.manual_seed(0)")[0])
import time, statistics
def t(f, n=2000):
    f(); ts=[]
    for _ in range(5):
        s=time.perf_counter()
        for _ in range(n): f()
        ts.append((time.perf_counter()-s)/n)
    return min(ts)*1e6
x=torch.randn(1,64); w=torch.randn(64,64); q=torch.randint(-100,100,(64,64),dtype=torch.int8); s=torch.rand(64)
print("tiny fp32 us", t(lambda: ext.small_batch_linear(x,w)))
print("tiny int8 us", t(lambda: ext.int8_linear(x,q,s)))
print("torch.empty us", t(lambda: torch.empty(1,64)))
# big streaming single layer, many copies to defeat cache
for dt in (torch.float32, torch.bfloat16, torch.int8):
    N,K=3072,576
    ws=[(torch.randint(-100,100,(N,K),dtype=torch.int8) if dt==torch.int8 else torch.randn(N,K,dtype=dt)) for _ in range(40)]
    xx=torch.randn(1,K, dtype=torch.float32 if dt==torch.int8 else dt); sc=torch.rand(N)
    def run():
        for w in ws:
            ext.int8_linear(xx,w,sc) if dt==torch.int8 else ext.small_batch_linear(xx,w)
    us=t(run, 20)
    nbytes=sum(w.numel()*w.element_size() for w in ws)
    print(dt, f"{us/40:.1f} us/call, {nbytes/us/1e3:.1f} GB/s")
