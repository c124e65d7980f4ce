import itertools, string, threading, time
from llguidance.gbnf_to_lark import gbnf_to_lark
L = string.ascii_lowercase
def names():
    yield from L
    yield from (a + b for a in L for b in L)
    yield from (a + b + c for a in L for b in L for c in L)
ns = list(itertools.islice((n for n in names() if n != "root"), 600))
lines = ["root ::= " + ns[0] + " " + " ".join(ns[450 + j] for j in range(50))]
lines += [f"{ns[i]} ::= {ns[i+1]}" for i in range(449)] + [f'{ns[449]} ::= "e"']
per = (65000 - sum(len(l) + 1 for l in lines)) // 50
for j in range(50):
    nm = ns[450 + j]; head = f"{nm} ::= "; tail = f' | "b" {nm}'
    lines.append(head + "." * (per - len(head) - len(tail) - 1) + tail)
G = "\n".join(lines) + "\n"
done = []
def work():
    t = time.time(); gbnf_to_lark(G); done.append(time.time() - t)
th = threading.Thread(target=work); th.start()
gaps = []; last = time.perf_counter()
while not done:
    time.sleep(0.001); now = time.perf_counter(); gaps.append(now - last); last = now
gaps.sort()
print("conversion", round(done[0], 2), "s; main thread gaps: median", round(gaps[len(gaps)//2]*1e3, 1), "ms, max", round(gaps[-1]*1e3, 1), "ms")
