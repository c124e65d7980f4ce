"""Differential fuzz helpers: build workloads, run them alone (reference) and batched (fuzzed),
compare every per-request result."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import torch

from roseinfer import LLM, SamplingParams
from roseinfer.sampling_params import StructuredOutputs

MODEL = "/tmp/s47/audit/tinysmol"
LP_TOL = 1e-4
TIE_TOL = 1e-4

_LOADED: dict[bool, Any] = {}


def loaded(eager: bool):
    if eager not in _LOADED:
        llm = LLM(model=MODEL, dtype="float32", enforce_eager=eager, num_kv_blocks=4)
        _LOADED[eager] = llm.loaded
    return _LOADED[eager]


def make_llm(backend: str, **cfg) -> LLM:
    """backend: 'cpu' (default layers, auto attention), 'eager' (enforce_eager), 'refattn'
    (default layers, attention_backend='reference')."""
    eager = backend == "eager"
    extra = {"attention_backend": "reference"} if backend == "refattn" else {}
    if backend == "kv8":
        extra = {"kv_cache_dtype": "int8"}
    return LLM(loaded=loaded(eager), **extra, **cfg)


_REF: dict[tuple, LLM] = {}


def ref_llm(backend: str, block_size: int) -> LLM:
    key = (backend, block_size)
    if key not in _REF:
        _REF[key] = make_llm(
            backend,
            block_size=block_size,
            num_kv_blocks=max(64, 4096 // block_size),
            max_num_seqs=64,
            max_num_batched_tokens=8192,
            enable_prefix_cache=False,
        )
    return _REF[key]


# ---- params ----------------------------------------------------------------------------------
def to_params(kw: dict) -> SamplingParams:
    kw = dict(kw)
    if "structured_outputs" in kw:
        so = dict(kw["structured_outputs"])
        if "choice" in so:
            so["choice"] = tuple(so["choice"])
        kw["structured_outputs"] = StructuredOutputs(**so)
    if "logit_bias" in kw:
        kw["logit_bias"] = {int(k): v for k, v in kw["logit_bias"].items()}
    for k in ("stop", "stop_token_ids", "bad_words", "allowed_token_ids"):
        if k in kw and isinstance(kw[k], list):
            kw[k] = tuple(kw[k])
    return SamplingParams(**kw)


def comparable(kw: dict) -> bool:
    """Greedy, or seeded: the output is promised to be the same alone or batched."""
    return kw.get("temperature", 1.0) < 1e-5 or kw.get("seed") is not None


# ---- running ---------------------------------------------------------------------------------
class Spy:
    """Counts preemptions (and self-preemptions) and prefix hits on blocks holding generated
    tokens, on one engine."""

    def __init__(self, llm: LLM) -> None:
        self.preempt = 0
        self.self_preempt = 0
        self.readmit_gen_hits = 0  # a readmitted seq matched blocks past its prompt
        self.cross_gen_hits = 0  # a seq matched a block written by another seq past its prompt
        self.prefix_hit_tokens = 0
        self.max_chunked = 0
        eng = llm.engine
        sched = eng.scheduler
        bm = eng.block_manager
        gen_blocks: dict[int, int] = {}  # hash -> seq id that wrote it holding generated tokens
        orig_sched = sched.schedule

        def schedule():
            out = orig_sched()
            for v in out.preempted:
                self.preempt += 1
            # self-preemption: the preempted list includes the sequence being scheduled
            return out

        orig_preempt = sched._preempt
        orig_fit = sched._fit
        current = [None]

        def fit(seq, n):
            current[0] = seq
            return orig_fit(seq, n)

        def preempt(seq):
            if seq is current[0]:
                self.self_preempt += 1
            return orig_preempt(seq)

        sched._fit = fit

        orig_cache = bm.cache_computed_blocks

        def cache(seq):
            before = seq.num_hashed_blocks
            orig_cache(seq)
            bs = bm.block_size
            for i in range(before, seq.num_hashed_blocks):
                if (i + 1) * bs > seq.num_prompt_tokens:
                    h = bm.blocks[seq.block_table[i]].hash
                    gen_blocks.setdefault(h, seq.seq_id)

        orig_match = bm.match_prefix

        def match(seq, use_cache=True):
            cached = orig_match(seq, use_cache)
            self.prefix_hit_tokens += cached
            if cached > seq.num_prompt_tokens:
                self.readmit_gen_hits += 1
            for b in seq.block_table:
                writer = gen_blocks.get(bm.blocks[b].hash)
                if writer is not None and writer != seq.seq_id:
                    self.cross_gen_hits += 1
                    break
            return cached

        sched.schedule = schedule
        sched._preempt = preempt
        bm.cache_computed_blocks = cache
        bm.match_prefix = match


def run_batch(llm: LLM, reqs: list[dict], abort_at: dict[int, int] | None = None,
              max_steps: int = 200000, reset_at: tuple[int, ...] = ()) -> tuple[list[Any], int]:
    """Submit every request at once; abort request i after step abort_at[i]. Outputs (None for
    aborted) and the number of steps."""
    abort_at = abort_at or {}
    proc = llm.processor
    rids = [llm._add(r["prompt"], to_params(r["params"])) for r in reqs]
    steps = 0
    aborted = set()
    while llm.engine.has_unfinished():
        proc.step()
        steps += 1
        if steps in reset_at:
            llm.reset_prefix_cache()
        for i, at in abort_at.items():
            if at == steps and i not in aborted:
                aborted.add(i)
                if rids[i] in proc.states:
                    proc.abort(rids[i])
        assert steps < max_steps, "no progress"
    outs = []
    for i, rid in enumerate(rids):
        outs.append(None if i in aborted else proc.states[rid].output())
    for rid in rids:
        proc.abort(rid)
    return outs, steps


def leaks(llm: LLM) -> list[str]:
    eng = llm.engine
    bm = eng.block_manager
    bad = []
    if eng.has_unfinished():
        bad.append("engine has unfinished")
    if eng.scheduler.running or eng.scheduler.num_waiting:
        bad.append(f"scheduler running={len(eng.scheduler.running)} waiting={eng.scheduler.num_waiting}")
    if bm.num_used_blocks != 0:
        bad.append(f"num_used_blocks={bm.num_used_blocks}")
    if any(b.ref_count for b in bm.blocks):
        bad.append("ref_count != 0")
    if eng.num_requests:
        bad.append(f"engine._requests={eng.num_requests}")
    if llm.processor.states:
        bad.append(f"processor states={len(llm.processor.states)}")
    return bad


def summarize(out) -> dict:
    def pos(d):
        if d is None:
            return None
        return {int(t): (lp.logprob, lp.rank, lp.decoded_token) for t, lp in d.items()}

    return {
        "prompt_logprobs": None if out.prompt_logprobs is None else [pos(d) for d in out.prompt_logprobs],
        "choices": [
            {
                "token_ids": list(c.token_ids),
                "text": c.text,
                "finish_reason": c.finish_reason,
                "stop_reason": c.stop_reason,
                "logprobs": None if c.logprobs is None else [pos(d) for d in c.logprobs],
                "cumulative_logprob": c.cumulative_logprob,
                "tool_calls": c.tool_calls,
                "error": c.error,
            }
            for c in out.outputs
        ],
    }


def reference(backend: str, block_size: int, req: dict, memo: dict) -> dict:
    key = (backend, block_size, json.dumps(req, sort_keys=True))
    if key not in memo:
        llm = ref_llm(backend, block_size)
        (out,) = llm.generate([req["prompt"]], to_params(req["params"]), use_tqdm=False)
        memo[key] = summarize(out)
        lk = leaks(llm)
        assert not lk, f"reference engine leaks: {lk}"
    return memo[key]


# ---- comparing -------------------------------------------------------------------------------
def cmp_positions(a, b, where: str) -> list[str]:
    """Two lists of position dicts (or None)."""
    if (a is None) != (b is None):
        return [f"{where}: one is None"]
    if a is None:
        return []
    if len(a) != len(b):
        return [f"{where}: lengths {len(a)} vs {len(b)}"]
    diffs = []
    for i, (x, y) in enumerate(zip(a, b)):
        if (x is None) != (y is None):
            diffs.append(f"{where}[{i}]: None mismatch")
            continue
        if x is None:
            continue
        if list(x) != list(y):
            # set or order differs: a tie at the top-k boundary is benign
            common = set(x) & set(y)
            ok = all(abs(x[t][0] - y[t][0]) < LP_TOL for t in common)
            only = [x[t][0] for t in set(x) - common] + [y[t][0] for t in set(y) - common]
            lows = sorted(v[0] for v in list(x.values()) + list(y.values()))
            if ok and not only:
                diffs.append(f"TIE {where}[{i}]: order differs at equal values")
            elif ok and only and all(abs(v - min(only)) < LP_TOL for v in only):
                diffs.append(f"TIE {where}[{i}]: top set differs at a tie")
            else:
                diffs.append(f"{where}[{i}]: keys {list(x)} vs {list(y)}")
            continue
        for t in x:
            if abs(x[t][0] - y[t][0]) > LP_TOL or x[t][2] != y[t][2]:
                diffs.append(f"{where}[{i}] token {t}: {x[t]} vs {y[t]}")
                break
            if x[t][1] != y[t][1]:
                diffs.append(f"TIE? {where}[{i}] token {t} rank: {x[t]} vs {y[t]}")
                break
    return diffs


def compare(got: dict, want: dict) -> list[str]:
    diffs = cmp_positions(got["prompt_logprobs"], want["prompt_logprobs"], "prompt_logprobs")
    if len(got["choices"]) != len(want["choices"]):
        return diffs + ["number of choices"]
    for k, (g, w) in enumerate(zip(got["choices"], want["choices"])):
        if g["token_ids"] != w["token_ids"]:
            i = next((j for j, (a, b) in enumerate(zip(g["token_ids"], w["token_ids"])) if a != b),
                     min(len(g["token_ids"]), len(w["token_ids"])))
            diffs.append(f"TOKENS choice {k} differ at {i}: got {g['token_ids'][i:i+4]} want "
                         f"{w['token_ids'][i:i+4]} (len {len(g['token_ids'])} vs {len(w['token_ids'])}); "
                         f"finish {g['finish_reason']} vs {w['finish_reason']}")
            continue
        for f in ("text", "finish_reason", "stop_reason", "tool_calls", "error"):
            if g[f] != w[f]:
                diffs.append(f"choice {k} {f}: {g[f]!r} vs {w[f]!r}")
        diffs += cmp_positions(g["logprobs"], w["logprobs"], f"choice {k} logprobs")
        cg, cw = g["cumulative_logprob"], w["cumulative_logprob"]
        if (cg is None) != (cw is None) or (cg is not None and abs(cg - cw) > 1e-3):
            diffs.append(f"choice {k} cumulative_logprob {cg} vs {cw}")
    return diffs


# ---- tie check for a greedy divergence --------------------------------------------------------
def raw_logits(llm: LLM, ids: list[int]) -> torch.Tensor:
    eng = llm.engine
    seq = eng.new_sequence(ids, SamplingParams(max_tokens=1, temperature=0))
    try:
        with torch.inference_mode():
            logits = eng.forward_alone(seq, len(ids))
    finally:
        eng.release(seq)
    return logits[0].float()


def greedy_gap(llm: LLM, req: dict, prefix_out: list[int], a: int, b: int) -> float:
    """|processed logit(a) - processed logit(b)| at the position after prompt + prefix_out."""
    p = to_params(req["params"])
    prompt = list(req["prompt"])
    v = raw_logits(llm, prompt + prefix_out)

    def proc(t):
        x = float(v[t])
        x += (p.logit_bias or {}).get(t, 0.0)
        if p.uses_penalties:
            if t in prompt or t in prefix_out:
                x = x / p.repetition_penalty if x > 0 else x * p.repetition_penalty
            c = prefix_out.count(t)
            x -= p.frequency_penalty * c + p.presence_penalty * (c > 0)
        return x

    return abs(proc(a) - proc(b))


# ---- boundary check for a seeded divergence --------------------------------------------------
def seed_boundary(backend: str, block_size: int, req: dict, k: int, i: int, want_tok: int,
                  got_tok: int) -> float | None:
    """Rerun the request alone, capture choice k's draw at output index i, and measure how close
    the divergence is to a floating-point boundary: the smallest of (the distance from u to
    got_tok's CDF interval; |logit(got) - logit(want)| after penalties and temperature (a tie);
    the distance of either token's logit from the top-k/top-p cut or the min-p cut). Small
    (< 2e-4): a float-noise flip; large: a real difference."""
    import math

    import roseinfer.layers.sampler as S
    from roseinfer.engine.model_runner import ModelRunner

    cap = {}
    cur = {}
    o_sample, o_from, o_topk, o_probs = (ModelRunner._sample, S.sample_from,
                                         S.apply_top_k_top_p, S.unnormalised_probs)

    def row():
        for r, s in enumerate(cur["seqs"]):
            if s.index == k and s.num_output_tokens == i:
                return r
        return None

    def _sample(self, seqs, logits):
        cur["seqs"] = seqs
        return o_sample(self, seqs, logits)

    def topk(logits, top_k, top_p):
        out = o_topk(logits, top_k, top_p)
        if (r := row()) is not None:
            cap["pre"], cap["post"] = logits[r].double().clone(), out[r].double().clone()
        return out

    def probs_(logits, in_place=False, peak=None):
        if (r := row()) is not None:
            cap["post"] = logits[r].double().clone()
            cap.setdefault("pre", cap["post"])
        return o_probs(logits, in_place, peak)

    def sample_from(probs, u):
        if (r := row()) is not None:
            cap["p"], cap["u"] = probs[r].double().clone(), float(u[r])
        return o_from(probs, u)

    ModelRunner._sample, S.sample_from, S.apply_top_k_top_p, S.unnormalised_probs = (
        _sample, sample_from, topk, probs_)
    try:
        llm = ref_llm(backend, block_size)
        llm.generate([req["prompt"]], to_params(req["params"]), use_tqdm=False)
    finally:
        ModelRunner._sample, S.sample_from, S.apply_top_k_top_p, S.unnormalised_probs = (
            o_sample, o_from, o_topk, o_probs)
    if "p" not in cap:
        return None
    p, u, pre, post = cap["p"], cap["u"], cap["pre"], cap["post"]
    cdf = p.cumsum(0) / p.sum()
    lo = cdf[got_tok - 1].item() if got_tok > 0 else 0.0
    hi = cdf[got_tok].item()
    dists = [0.0 if lo <= u < hi else min(abs(u - lo), abs(u - hi))]
    dists.append(abs(pre[got_tok] - pre[want_tok]).item())
    kept = post[torch.isfinite(post)]
    if kept.numel():
        cut = kept.min().item()
        dists.append(abs(pre[got_tok].item() - cut))
    min_p = to_params(req["params"]).min_p
    if min_p > 0:
        cut = post.max().item() + math.log(min_p)
        dists.append(abs(pre[got_tok].item() - cut))
    return min(d for d in dists if d == d)


# ---- the online front door --------------------------------------------------------------------
def run_client(llm: LLM, reqs: list[dict], abort_after: dict[int, int] | None = None,
               stream_interval: int = 1, timeout: float = 120.0):
    """Submit every request to an EngineClient (its engine thread) at once; abort request i
    after its abort_after[i]-th event. Outputs (None for aborted)."""
    import queue
    import time as _time

    from roseinfer.engine.client import EngineClient
    from roseinfer.output.processor import RequestState
    from roseinfer.outputs import RequestFailed

    abort_after = abort_after or {}
    eng = llm.engine
    client = EngineClient(eng, stream_interval=stream_interval)
    q: queue.Queue = queue.Queue()
    states, index = {}, {}
    try:
        for i, r in enumerate(reqs):
            rid = f"c{i}"
            p = to_params(r["params"])
            states[rid] = RequestState(rid, r["prompt"], p, eng.tokenizer, eng.stop_token_ids)
            index[rid] = i
            client.submit_sync(rid, r["prompt"], p, q)
        seen = {rid: 0 for rid in states}
        aborted = set()
        deadline = _time.time() + timeout
        while not all(s.finished for s in states.values()):
            rid, ev = q.get(timeout=max(1.0, deadline - _time.time()))
            st = states[rid]
            try:
                client.apply_event(st, ev)
            except RequestFailed:
                pass
            seen[rid] += 1
            i = index[rid]
            if abort_after.get(i) == seen[rid] and not st.finished:
                aborted.add(i)
                client.abort(rid)
        while eng.has_unfinished() or not client._commands.empty():
            assert _time.time() < deadline, "engine did not settle"
            _time.sleep(0.01)
        _time.sleep(0.05)
    finally:
        client.shutdown()
    return [None if index[rid] in aborted else st.output() for rid, st in states.items()]
