"""Replay a saved workload (fails/wN.json), optionally shrink it to the fewest requests that
still show a mismatch for one target request.
Usage: replay.py FILE [TARGET_REQ] [--shrink]"""

from __future__ import annotations

import json
import sys

import fuzzlib as F


def mismatch(w, keep, target, memo) -> list[str]:
    reqs = [w["reqs"][i] for i in keep]
    abort = {keep.index(int(i)): at for i, at in w["abort_at"].items() if int(i) in keep}
    llm = F.make_llm(w["backend"], **w["cfg"])
    if w.get("front") == "client":
        outs = F.run_client(llm, reqs, {i: 1 + at % 8 for i, at in abort.items()}, w["stream_interval"])
    else:
        outs, _ = F.run_batch(llm, reqs, abort)
    leaks = F.leaks(llm)
    t = keep.index(target)
    if outs[t] is None:
        return ["aborted"]
    got = F.summarize(outs[t])
    want = F.reference(w["backend"], w["cfg"]["block_size"], w["reqs"][target], memo)
    d = [x for x in F.compare(got, want) if not x.startswith("TIE")]
    return d + [f"LEAK {x}" for x in leaks]


def shrink(w, target, memo):
    keep = list(range(len(w["reqs"])))
    assert mismatch(w, keep, target, memo), "does not reproduce"
    changed = True
    while changed:
        changed = False
        # try removing halves, then singles
        for size in (len(keep) // 2, len(keep) // 4, 1):
            if size < 1:
                continue
            i = 0
            while i < len(keep):
                cand = [k for k in keep[:i] + keep[i + size:]]
                if target in cand and cand != keep and mismatch(w, cand, target, memo):
                    keep = cand
                    changed = True
                    print("  kept", len(keep), keep, flush=True)
                else:
                    i += size
    return keep


if __name__ == "__main__":
    w = json.load(open(sys.argv[1]))
    memo: dict = {}
    if len(sys.argv) > 2:
        target = int(sys.argv[2])
        keep = list(range(len(w["reqs"])))
        print(mismatch(w, keep, target, memo))
        if "--shrink" in sys.argv:
            keep = shrink(w, target, memo)
            print("MINIMAL", keep)
            small = dict(w, reqs=[w["reqs"][i] for i in keep],
                         abort_at={str(keep.index(int(i))): at for i, at in w["abort_at"].items()
                                   if int(i) in keep})
            small["target"] = keep.index(target)
            out = sys.argv[1].replace(".json", f"_min{target}.json")
            json.dump(small, open(out, "w"))
            print("wrote", out, json.dumps(small)[:2000])
            print(mismatch(small, list(range(len(small["reqs"]))), small["target"], memo))
