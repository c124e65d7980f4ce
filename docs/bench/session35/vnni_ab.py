"""vnni_int8_linear over SmolLM2's 120 linears at R rows, the experiment build's switch on in even
100 ms windows: each call classified by the window it starts in; per side, the sum over layers
of each layer's median call."""
import sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
H, INTER, KV, L = 576, 1536, 192, 30
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
torch.manual_seed(0)
ws = [torch.randint(-127, 128, (n, kk), dtype=torch.int8) for n, kk in shapes]
packed = [k.vnni_pack_weight(w) for w in ws]
scales = [torch.rand(n).bfloat16() * 0.01 for n, _ in shapes]
for rows in [int(r) for r in sys.argv[1].split(",")]:
    xs = {kk: torch.randn(rows, kk).bfloat16() for kk in (H, INTER)}
    on = [[] for _ in shapes]; off = [[] for _ in shapes]
    outs = {}
    t_end = time.time() + float(sys.argv[2])
    while time.time() < t_end:
        for i, (n, kk) in enumerate(shapes):
            t0 = time.time(); s = time.perf_counter()
            y = k.vnni_int8_linear(xs[kk], packed[i], scales[i])
            d = time.perf_counter() - s
            w0 = int(t0 * 1000) // 100; w1 = int((t0 + d) * 1000) // 100
            if w0 == w1:
                side = w0 % 2 == 0
                (on if side else off)[i].append(d)
                if i < 4: outs.setdefault((i, side), y)
    for i in range(4):
        assert torch.equal(outs[(i, True)], outs[(i, False)]), i
    son = sum(statistics.median(t) for t in on) * 1e3
    soff = sum(statistics.median(t) for t in off) * 1e3
    print(f"{rows} rows: on {son:.2f} ms, off {soff:.2f} ms, on/off {100 * (son / soff - 1):+.1f} % (bit-identical)", flush=True)
