"""Randomized differential fuzz: each workload = 8-40 requests submitted together into a tiny,
crowded engine; every greedy / seeded request is compared with itself run alone on a big idle
engine (same backend, same block size). Usage: fuzz.py START COUNT [TIME_LIMIT_S]"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback

import fuzzlib as F
from roseinfer.engine.requests import InvalidRequestError

VOCAB = 49152
STOPS = ["e", "a", "s", "t", " ", "er", "in", "on", "an", "\n", ".", ",", "ing", "x", "qu",
         "the", "re", "ation", "!", "0", "1", "22", '"', "}", "yes", "o"]
SCHEMAS = [
    {"json": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
    {"json": {"type": "object", "properties": {"b": {"type": "string", "maxLength": 4},
                                                "c": {"type": "boolean"}},
              "required": ["b", "c"], "additionalProperties": False}},
    {"json": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
    {"json": {"enum": ["x", "yy", "zzz", "kiwi"]}},
    {"json_object": True},
    {"regex": "[a-c]{1,6}"},
    {"regex": "(yes|no|maybe)\\."},
    {"regex": "\\d{2,4}-[xyz]+"},
    {"choice": ["apple", "banana", "cherry pie", "a"]},
    {"choice": ["Yes", "No"]},
    {"grammar": 'start: "hi" ("!" | "?")+ " " NAME\nNAME: /[a-z]{1,5}/'},
    {"grammar": 'root ::= "a" [b-d]* "e"'},
    {"grammar": 'root ::= ("x" | "yz")+ "."'},
]

FAILDIR = "/tmp/s51/fuzz/fails"
os.makedirs(FAILDIR, exist_ok=True)


def token_pool() -> tuple[list[int], list[str]]:
    """Tokens the tiny model likes to generate (so stop ids, biases, allowed ids bite), and
    short strings from their text (stop strings, bad words). Deterministic."""
    rng = random.Random(7)
    llm = F.ref_llm("cpu", 16)
    prompts = [[rng.randrange(3, VOCAB) for _ in range(rng.randint(1, 30))] for _ in range(40)]
    toks: set[int] = set()
    for i, p in enumerate(prompts):
        kw = {"temperature": 0.0, "max_tokens": 16, "ignore_eos": True}
        if i % 2:
            kw["repetition_penalty"] = 1.8
            kw["presence_penalty"] = 1.0
        out = F.reference("cpu", 16, {"prompt": p, "params": kw}, {})
        toks.update(out["choices"][0]["token_ids"])
    pool = sorted(toks)
    tok = llm.tokenizer
    words = []
    for t in pool:
        s = tok.decode([t]).strip()
        if s:
            words.append(s)
            if len(s) > 2:
                words.append(s[:2])
    return pool, sorted(set(words))


def gen_params(rng: random.Random, pool: list[int], words: list[str]) -> dict:
    kw: dict = {}
    kind = rng.choices(["greedy", "seeded", "free"], [0.5, 0.4, 0.1])[0]
    if kind == "greedy":
        kw["temperature"] = rng.choice([0.0, 0.0, 1e-6])
    else:
        kw["temperature"] = rng.choice([0.2, 0.5, 1.0, 1.0, 1.5, 3.0])
        if kind == "seeded":
            kw["seed"] = rng.choice([0, 1, 42, 7, rng.randrange(2**64), -5])
        if rng.random() < 0.4:
            kw["top_k"] = rng.choice([1, 2, 5, 40, 1000, -1, 100000])
        if rng.random() < 0.4:
            kw["top_p"] = rng.choice([0.05, 0.3, 0.8, 0.95])
        if rng.random() < 0.3:
            kw["min_p"] = rng.choice([0.01, 0.1, 0.5, 1.0])
    kw["max_tokens"] = rng.choice([1, 2, 3, 5, 8, 13, 20, 32, 40])
    if rng.random() < 0.3:
        kw["min_tokens"] = rng.randint(0, kw["max_tokens"])
    if rng.random() < 0.5:
        kw["ignore_eos"] = True
    if rng.random() < 0.3:
        kw["repetition_penalty"] = rng.choice([0.5, 0.9, 1.0, 1.2, 2.0])
        kw["presence_penalty"] = rng.choice([-2.0, -0.5, 0.0, 0.5, 2.0])
        kw["frequency_penalty"] = rng.choice([-1.0, 0.0, 0.3, 1.5])
    if rng.random() < 0.25:
        cands = pool + [0, 2, rng.randrange(VOCAB)]
        kw["logit_bias"] = {str(t): rng.choice([-100, -10, -1, -0.1, 0.1, 0.5, 1, 3, 100])
                            for t in rng.sample(cands, rng.randint(1, 6))}
    if rng.random() < 0.15:
        kw["bad_words"] = rng.sample(words, rng.randint(1, 3))
    if rng.random() < 0.1:
        kw["allowed_token_ids"] = rng.sample(pool + [2], rng.randint(1, min(40, len(pool))))
    if rng.random() < 0.3:
        kw["stop"] = rng.sample(STOPS + words, rng.randint(1, 3))
    if rng.random() < 0.2:
        kw["stop_token_ids"] = rng.sample(pool, rng.randint(1, 3))
    if rng.random() < 0.3:
        kw["logprobs"] = rng.choice([0, 1, 3, 5, 20])
    if rng.random() < 0.2:
        kw["prompt_logprobs"] = rng.choice([0, 1, 4, 20])
    if rng.random() < 0.15:
        kw["structured_outputs"] = rng.choice(SCHEMAS)
    if rng.random() < 0.15:
        kw["n"] = rng.choice([2, 3])
    return kw


def gen_workload(idx: int, pool, words, memo) -> dict:
    rng = random.Random(100003 * idx + 17)
    backend = rng.choice(["cpu", "cpu", "eager", "eager", "refattn", "kv8"])
    hard = rng.random() < 0.5  # longer prompts, more sharing, early aborts
    bs = rng.choice([1, 2, 4, 4, 8, 16])
    nreq = rng.randint(8, 40)
    prefixes = [[rng.randrange(3, VOCAB) for _ in range(rng.randint(1, 90 if hard else 40))]
                for _ in range(rng.randint(1, 5))]
    reqs: list[dict] = []
    while len(reqs) < nreq:
        r = rng.random()
        if reqs and r < (0.25 if hard else 0.12):  # the same request again
            reqs.append(json.loads(json.dumps(rng.choice(reqs))))
            continue
        if reqs and r < 0.25:
            prompt = list(rng.choice(reqs)["prompt"])
        elif reqs and r < 0.4:  # a continuation of an earlier greedy request's output
            base = rng.choice(reqs)
            out = F.reference(backend, bs, base, memo)["choices"][0]["token_ids"]
            prompt = list(base["prompt"]) + out[: rng.randint(0, len(out))]
            prompt += [rng.randrange(3, VOCAB) for _ in range(rng.choice([0, 0, 1, 3]))]
        else:
            pre = rng.choice(prefixes)
            prompt = pre[: rng.randint(1, len(pre))]
            prompt += [rng.randrange(3, VOCAB) for _ in range(rng.choice([0, 0, 1, 2, 5, 10]))]
        for _ in range(20):
            req = {"prompt": prompt, "params": gen_params(rng, pool, words)}
            try:
                F.reference(backend, bs, req, memo)
                break
            except (InvalidRequestError, ValueError):
                continue
        else:
            continue
        reqs.append(req)
    need = max(-(-(len(r["prompt"]) + r["params"]["max_tokens"]) // bs) for r in reqs)
    cfg = {
        "block_size": bs,
        "num_kv_blocks": need + rng.choice([0, 0, 1, 2, 4, 8, 32]),
        "max_num_seqs": rng.randint(2, 40 if hard else 16),
        "max_num_batched_tokens": rng.choice([1, 2, 3, 4, 7, 8, 16, 32, 64, 512]),
        "enable_prefix_cache": rng.random() < 0.85,
    }
    abort_at = {}
    if rng.random() < 0.3:
        for i in rng.sample(range(len(reqs)), rng.randint(1, 3)):
            abort_at[i] = rng.randint(1, 12 if hard else 80)
    idle = rng.sample(range(len(reqs)), min(2, len(reqs)))
    front = "client" if rng.random() < 0.3 else "llm"
    return {"idx": idx, "backend": backend, "cfg": cfg, "reqs": reqs, "abort_at": abort_at,
            "idle": idle, "front": front, "stream_interval": rng.choice([1, 1, 2, 3, 5]),
            "reset_at": sorted(rng.sample(range(1, 200), 3)) if rng.random() < 0.25 else []}


def classify(w, req, got, want, diffs) -> list[str]:
    """Drop benign greedy flips at a reference tie; return the real diffs."""
    real = []
    for d in diffs:
        if d.startswith("TIE"):
            continue
        if d.startswith("TOKENS") and F.comparable(req["params"]) and \
                req["params"].get("temperature", 1.0) < 1e-5:
            k = int(d.split()[2])
            g, wt = got["choices"][k]["token_ids"], want["choices"][k]["token_ids"]
            i = next((j for j, (a, b) in enumerate(zip(g, wt)) if a != b), None)
            if i is not None:
                gap = F.greedy_gap(F.ref_llm(w["backend"], w["cfg"]["block_size"]), req,
                                   wt[:i], g[i], wt[i])
                if gap < F.TIE_TOL:
                    STATS["ties"] += 1
                    continue
                d += f" (gap {gap:.2e})"
        elif d.startswith("TOKENS") and req["params"].get("seed") is not None:
            k = int(d.split()[2])
            g, wt = got["choices"][k]["token_ids"], want["choices"][k]["token_ids"]
            i = next((j for j, (a, b) in enumerate(zip(g, wt)) if a != b), None)
            if i is not None:
                dist = F.seed_boundary(w["backend"], w["cfg"]["block_size"], req, k, i, wt[i], g[i])
                if dist is not None and dist < 2e-4:
                    STATS["seed_boundary"] += 1
                    STATS["seed_boundary_dists"].append(dist)
                    continue
                d += f" (boundary {dist})"
        real.append(d)
    return real


STATS = {"workloads": 0, "requests": 0, "compared": 0, "choices": 0, "tokens": 0, "ties": 0,
         "preempt": 0, "self_preempt": 0, "readmit_gen_hits": 0, "cross_gen_hits": 0,
         "prefix_hit_tokens": 0, "aborted": 0, "idle_checks": 0, "xbackend": 0,
         "xbackend_diff": 0, "fails": 0, "seed_boundary": 0, "kv8_diff_workloads": 0, "client_workloads": 0, "resets": 0, "seed_boundary_dists": [], "feat": {}}


def run_workload(w, memo, quiet=False) -> list[str]:
    backend, cfg = w["backend"], w["cfg"]
    llm = F.make_llm(backend, **cfg)
    spy = F.Spy(llm)
    abort_at = {int(k): v for k, v in w["abort_at"].items()}
    if w.get("front") == "client":
        STATS["client_workloads"] += 1
        outs = F.run_client(llm, w["reqs"], {i: 1 + at % 8 for i, at in abort_at.items()},
                            w["stream_interval"])
        steps = -1
    else:
        outs, steps = F.run_batch(llm, w["reqs"], abort_at, reset_at=tuple(w.get("reset_at", ())))
        STATS["resets"] += len(w.get("reset_at", ()))
    problems = [f"LEAK after batch: {x}" for x in F.leaks(llm)]
    for i, (req, out) in enumerate(zip(w["reqs"], outs)):
        STATS["requests"] += 1
        for f in req["params"]:
            STATS["feat"][f] = STATS["feat"].get(f, 0) + 1
        if out is None:
            STATS["aborted"] += 1
            continue
        if not F.comparable(req["params"]):
            continue
        got = F.summarize(out)
        want = F.reference(backend, cfg["block_size"], req, memo)
        STATS["compared"] += 1
        STATS["choices"] += len(got["choices"])
        STATS["tokens"] += sum(len(c["token_ids"]) for c in got["choices"])
        for c in got["choices"]:
            key = f"finish_{c['finish_reason']}" + ("_str" if isinstance(c["stop_reason"], str) else
                                                    "_id" if isinstance(c["stop_reason"], int) else "")
            STATS["feat"][key] = STATS["feat"].get(key, 0) + 1
        for d in classify(w, req, got, want, F.compare(got, want)):
            problems.append(f"req {i}: {d}")
    # alone on the same (now idle, prefix-cache warm) engine
    for i in w["idle"]:
        req = w["reqs"][i]
        if not F.comparable(req["params"]):
            continue
        outs2, _ = F.run_batch(llm, [req])
        got = F.summarize(outs2[0])
        want = F.reference(backend, cfg["block_size"], req, memo)
        STATS["idle_checks"] += 1
        for d in classify(w, req, got, want, F.compare(got, want)):
            problems.append(f"idle req {i}: {d}")
    problems += [f"LEAK after idle: {x}" for x in F.leaks(llm)]
    # secondary: greedy tokens across backends (the references)
    other = "eager" if backend != "eager" else "cpu"
    for i, req in enumerate(w["reqs"] if backend != "kv8" else []):
        if req["params"].get("temperature", 1.0) >= 1e-5:
            continue
        a = F.reference(backend, cfg["block_size"], req, memo)["choices"][0]["token_ids"]
        b = F.reference(other, cfg["block_size"], req, memo)["choices"][0]["token_ids"]
        STATS["xbackend"] += 1
        if a != b:
            j = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), None)
            gap = -1.0 if j is None else F.greedy_gap(F.ref_llm(backend, cfg["block_size"]),
                                                      req, a[:j], a[j], b[j])
            if gap < 0 or gap >= F.TIE_TOL:
                STATS["xbackend_diff"] += 1
                problems.append(f"XBACKEND req {i} {backend} vs {other}: at {j} gap {gap:.2e}")
            else:
                STATS["ties"] += 1
    for k in ("preempt", "self_preempt", "readmit_gen_hits", "cross_gen_hits", "prefix_hit_tokens"):
        STATS[k] += getattr(spy, k)
    if not quiet:
        print(f"w{w['idx']} {w.get('front')}/{w.get('stream_interval')} {backend} {cfg} n={len(w['reqs'])} steps={steps} "
              f"preempt={spy.preempt}/{spy.self_preempt} gen_hits={spy.readmit_gen_hits}/"
              f"{spy.cross_gen_hits} aborts={len(abort_at)} problems={len(problems)}", flush=True)
    return problems


def main():
    start, count = int(sys.argv[1]), int(sys.argv[2])
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 540
    t0 = time.time()
    pool, words = token_pool()
    print(f"pool {len(pool)} tokens, {len(words)} words", flush=True)
    memo: dict = {}
    for idx in range(start, start + count):
        if time.time() - t0 > limit:
            break
        w = gen_workload(idx, pool, words, memo)
        try:
            problems = run_workload(w, memo)
        except Exception:
            problems = ["EXCEPTION " + traceback.format_exc()]
            print(problems[0], flush=True)
        STATS["workloads"] += 1
        if problems and w["backend"] == "kv8" and not any("LEAK" in p or "EXCEPTION" in p for p in problems):
            STATS["kv8_diff_workloads"] += 1
            w["problems"] = problems
            with open(f"{FAILDIR}/kv8_w{idx}.json", "w") as f:
                json.dump(w, f)
            print(f"    kv8: {len(problems)} diffs (lossy int8 cache; kept apart)", flush=True)
        elif problems:
            STATS["fails"] += 1
            w["problems"] = problems
            with open(f"{FAILDIR}/w{idx}.json", "w") as f:
                json.dump(w, f)
            for p in problems[:8]:
                print("   ", p[:300], flush=True)
        if len(memo) > 20000:
            memo.clear()
    print("STATS", json.dumps(STATS), f"time {time.time()-t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
