import time, llguidance
for n in (500, 1000, 2000, 4000):
    g = "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
    t = time.time(); llguidance.grammar_from("grammar", g); print(n, len(g), f"{time.time()-t:.2f}s", flush=True)
