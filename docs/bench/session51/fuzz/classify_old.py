"""Classify every saved seeded/greedy token mismatch (fails_run1/, fails/) with the float-boundary
measure (fuzzlib.seed_boundary / greedy_gap)."""
import glob, json, re
import fuzzlib as F
for f in sorted(glob.glob("fails_run1/w*.json") + glob.glob("fails_run2/w*.json") + glob.glob("fails/w*.json")):
    d = json.load(open(f))
    if d["backend"] == "kv8" or "_min" in f:
        continue
    for p in d["problems"]:
        m = re.match(r"(idle )?req (\d+): TOKENS choice (\d+) differ at (\d+): got \[(\d+).*?want \[(\d+)", p)
        if not m:
            if "XBACKEND" not in p:
                print(f, "OTHER", p[:200])
            continue
        r, k, i, g, wt = (int(x) for x in m.groups()[1:])
        req = d["reqs"][r]
        if req["params"].get("seed") is None:
            print(f, "NOT SEEDED", p[:200]); continue
        dist = F.seed_boundary(d["backend"], d["cfg"]["block_size"], req, k, i, wt, g)
        print(f, f"req {r} choice {k} at {i}: boundary distance {dist:.2e}", "FLOAT" if dist is not None and dist < 2e-4 else "REAL?")
