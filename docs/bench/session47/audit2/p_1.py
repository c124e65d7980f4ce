from common import *
import itertools
n = 3000
g = "start: r0\n" + "\n".join(f"r{i}: \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n}: \"end\"\n"
print("3000-rule lark bytes", len(g))
probe("lark_chain_3000", "/v1/completions", {"prompt": "Hi", "max_tokens": 8, "structured_outputs": {"grammar": g}})
for N in (5000, 7300):
    ns = list(itertools.islice(names(), N))
    g2 = f"start: {ns[0]}\n" + "".join(f"{ns[i]}: {ns[i+1]}\n" for i in range(N - 1)) + f"{ns[-1]}: \"x\"\n"
    print(f"{N}-rule short lark bytes", len(g2.encode()))
    probe(f"lark_short_chain_{N}", "/v1/completions", {"prompt": "Hi", "max_tokens": 8, "temperature": 0, "structured_outputs": {"grammar": g2}}, timeout=300)
