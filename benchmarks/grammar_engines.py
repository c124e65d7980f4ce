"""The two grammar engines for structured output, xgrammar and llguidance, on SmolLM2's tokenizer
(vocab 49152): tokenizer setup, compile time per grammar, a decode loop per grammar at batch 1
and 32 that times the bitmask fill and the advance per step and checks the output, then the cost
of applying a bitmask to [32, 49152] float32 logits. The engines stay out of the venv:

    .venv/bin/pip install --target /tmp/gpkgs --no-deps xgrammar llguidance apache-tvm-ffi \\
        jsonschema attrs referencing rpds-py jsonschema-specifications
    PYTHONPATH=/tmp/gpkgs:. .venv/bin/python benchmarks/grammar_engines.py --steps 64 --repeats 5

Tokens are picked without a model: the allowed token that ranks highest under fresh seeded random
logits plus a bias on EOS and on tokens made only of " } ] , characters, which grows by --ramp a
step since the row last picked a token with a quote, so strings and numbers stay a few tokens
long and rows end. JSON is compact in both engines (no free whitespace, separators "," and ":").
Figures: docs/bench/session10/grammar_engines.txt.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from roseinfer.loader import smollm2_path
from roseinfer.tokenizer import Tokenizer

VOCAB = 49152
WORDS = (VOCAB + 31) // 32
STR = {"type": "string"}
SCHEMA = {"type": "object", "additionalProperties": False, "properties": {
    "name": STR, "age": {"type": "integer", "minimum": 0},
    "role": {"enum": ["admin", "user", "guest"]},
    "tags": {"type": "array", "items": STR, "maxItems": 3},
    "address": {"type": "object", "properties": {"city": STR, "zip": STR},
                "required": ["city", "zip"], "additionalProperties": False},
    "active": {"type": "boolean"}},
    "required": ["name", "age", "role", "tags", "address", "active"]}  # fmt: skip
TOOL = {"type": "object", "additionalProperties": False, "properties": {
    "name": {"const": "get_weather"},
    "arguments": {"type": "object", "additionalProperties": False, "properties": {
        "city": STR, "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "days", "unit"]}},
    "required": ["name", "arguments"]}  # fmt: skip
REGEX = r"[a-z]{2,12}(\.[a-z]{2,12})?@[a-z]{3,10}\.(com|org|net)"
CHOICES = ["get_weather", "get_time", "search_web", "send_email"]
CASES: dict[str, tuple[str, Any]] = {"json schema": ("json", SCHEMA), "tool call": ("json", TOOL),
    "any json": ("json", {"type": "object"}), "regex": ("regex", REGEX),
    "choice": ("choice", CHOICES)}  # fmt: skip


class Xgrammar:
    name, has_cache = "xgrammar", True

    def __init__(self, hf: Any, threads: int) -> None:
        import xgrammar

        self.x = xgrammar
        t0 = time.perf_counter()
        info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=VOCAB)
        self.tokenizer_ms = (time.perf_counter() - t0) * 1e3
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=threads)
        self.batch = xgrammar.BatchGrammarMatcher(max_threads=threads)

    def clear_cache(self) -> None:
        self.compiler.clear_cache()

    def compile(self, kind: str, spec: Any) -> Any:
        if kind == "json":  # strict_mode=False: the schema's own additionalProperties decide
            return self.compiler.compile_json_schema(
                json.dumps(spec), any_whitespace=False, separators=(",", ":"), strict_mode=False
            )
        if kind == "regex":
            return self.compiler.compile_regex(spec)
        return self.compiler.compile_grammar("root ::= " + " | ".join(json.dumps(s) for s in spec))

    def matcher(self, compiled: Any) -> Any:
        return self.x.GrammarMatcher(compiled)

    def fill(self, m: Any, bitmask: torch.Tensor, row: int) -> None:
        m.fill_next_token_bitmask(bitmask, row)

    def fill_batch(self, ms: list[Any], bitmask: torch.Tensor, rows: list[int]) -> None:
        self.batch.batch_fill_next_token_bitmask(ms, bitmask, rows)

    def advance(self, m: Any, token: int) -> bool:
        return bool(m.accept_token(token))

    def advance_batch(self, ms: list[Any], tokens: list[int]) -> list[bool]:
        return self.x.BatchGrammarMatcher.batch_accept_token(ms, tokens)

    def finished(self, m: Any) -> bool:
        return bool(m.is_terminated())


class Llguidance:
    name, has_cache = "llguidance", False  # no cache: "compiled" is a template matcher to copy

    def __init__(self, hf: Any, threads: int) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.torch

        self.g, self.gt = llguidance, llguidance.torch
        t0 = time.perf_counter()
        self.tok = llguidance.hf.from_tokenizer(hf, n_vocab=VOCAB)
        self.tokenizer_ms = (time.perf_counter() - t0) * 1e3
        self.executor = llguidance.LLExecutor(num_threads=threads)

    def compile(self, kind: str, spec: Any) -> Any:
        if kind == "json":
            flat = {"whitespace_flexible": False}
            grammar = self.g.LLMatcher.grammar_from_json_schema(json.dumps(spec), overrides=flat)
        else:
            grammar = self.g.grammar_from(kind, spec if kind == "regex" else json.dumps(spec))
        m = self.g.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        return m

    def matcher(self, compiled: Any) -> Any:
        return compiled.deep_copy()

    def fill(self, m: Any, bitmask: torch.Tensor, row: int) -> None:
        self.gt.fill_next_token_bitmask(m, bitmask, row)

    def fill_batch(self, ms: list[Any], bitmask: torch.Tensor, rows: list[int]) -> None:
        self.gt.fill_next_token_bitmask_par(
            self.executor, list(zip(ms, rows, strict=True)), bitmask
        )

    def advance(self, m: Any, token: int) -> bool:
        return bool(m.consume_token(token))

    def advance_batch(self, ms: list[Any], tokens: list[int]) -> list[bool]:
        return self.executor.consume_token_par(list(zip(ms, tokens, strict=True)))

    def finished(self, m: Any) -> bool:
        return bool(m.is_stopped())


Engine = Xgrammar | Llguidance


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(milliseconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1e3, out


def unpack(bitmask: torch.Tensor, vocab: int = VOCAB) -> torch.Tensor:
    """[rows, words] int32 -> [rows, vocab] bool: bit j of word w is token 32w+j (little-endian)."""
    bits = np.unpackbits(bitmask.numpy().view(np.uint8), axis=-1, count=vocab, bitorder="little")
    return torch.from_numpy(bits.view(np.bool_))


def apply_plain(logits: torch.Tensor, bitmask: torch.Tensor) -> None:
    """A sampler's own apply, no engine kernel: unpack, then -inf where the bit is 0."""
    logits.masked_fill_(~unpack(bitmask, logits.shape[1]), float("-inf"))


def compile_row(eng: Engine, kind: str, spec: Any, repeats: int) -> list[float]:
    """Medians: cold compile, its first mask, cached compile, new matcher, that one's first mask."""
    rows, bitmask = [], torch.zeros(1, WORDS, dtype=torch.int32)
    for _ in range(repeats):
        if isinstance(eng, Xgrammar):
            eng.clear_cache()
        cold, compiled = timed(lambda: eng.compile(kind, spec))
        first, _ = timed(lambda m=eng.matcher(compiled): eng.fill(m, bitmask, 0))
        cached = timed(lambda: eng.compile(kind, spec))[0] if eng.has_cache else float("nan")
        new, m = timed(lambda c=compiled: eng.matcher(c))
        rows.append([cold, first, cached, new, timed(lambda m=m: eng.fill(m, bitmask, 0))[0]])
    return [statistics.median(col) for col in zip(*rows, strict=True)]


def decode(eng: Engine, compiled: Any, batch: int, batched: bool, steps: int,
           bias: tuple[torch.Tensor, torch.Tensor], ramp: float, seed: int) -> dict[str, Any]:  # fmt: skip
    """One generation of `batch` rows; fill times of full-batch steps, totals, tokens."""
    boost, quote = bias
    ms = [eng.matcher(compiled) for _ in range(batch)]
    bitmask = torch.zeros(batch, WORDS, dtype=torch.int32)
    gen, run = torch.Generator().manual_seed(seed), torch.zeros(batch)
    tokens: list[list[int]] = [[] for _ in range(batch)]
    out: dict[str, Any] = {"full": [], "fill": 0.0, "row_steps": 0, "advance": []}
    active = list(range(batch))
    for _ in range(steps):
        sub = [ms[i] for i in active]
        t0 = time.perf_counter()
        if batched:
            eng.fill_batch(sub, bitmask, active)
        else:
            for m, i in zip(sub, active, strict=True):
                eng.fill(m, bitmask, i)
        fill = (time.perf_counter() - t0) * 1e3
        if len(active) == batch:
            out["full"].append(fill)
            out.setdefault("allowed0", int(unpack(bitmask[:1]).sum()))
        out["fill"] += fill
        out["row_steps"] += len(active)
        logits = torch.randn(batch, VOCAB, generator=gen) + ramp * run[:, None] * boost
        apply_plain(logits, bitmask)
        picks = logits.argmax(-1).tolist()
        chosen = [picks[i] for i in active]
        t0 = time.perf_counter()
        if batched:
            ok = eng.advance_batch(sub, chosen)
        else:
            ok = [eng.advance(m, t) for m, t in zip(sub, chosen, strict=True)]
        out["advance"].append((time.perf_counter() - t0) * 1e3 / len(active))
        if not all(ok):
            raise RuntimeError(f"{eng.name}: a matcher refused a token its mask allowed")
        for i, t in zip(active, chosen, strict=True):
            tokens[i].append(t)
            run[i] = 0 if quote[t] else run[i] + 1
        active = [i for i in active if not eng.finished(ms[i])]
        if not active:
            break
    out["tokens"], out["done"] = tokens, sum(eng.finished(m) for m in ms)
    return out


def valid(kind: str, spec: Any, text: str) -> bool:
    if kind == "regex":
        return re.fullmatch(spec, text) is not None
    if kind == "choice":
        return text in spec
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    try:
        import jsonschema
    except ImportError:  # a hand check: an object with the required keys
        return isinstance(obj, dict) and all(k in obj for k in spec.get("required", []))
    return jsonschema.Draft202012Validator(spec).is_valid(obj)


def bench_apply(batch: int, repeats: int) -> None:
    logits = torch.randn(batch, VOCAB)
    bitmask = torch.randint(-(2**31), 2**31 - 1, (batch, WORDS), dtype=torch.int32)
    impls = {"np.unpackbits + torch masked_fill_": lambda: apply_plain(logits, bitmask)}
    if importlib.util.find_spec("xgrammar"):
        from xgrammar import apply_token_bitmask_inplace as xgr_apply

        impls["xgrammar apply_token_bitmask_inplace (cpu)"] = lambda: xgr_apply(logits, bitmask)
        rows = list(range(0, batch, max(1, batch // 4)))
        impls[f"  same, {len(rows)} of the rows (indices=)"] = lambda: xgr_apply(
            logits, bitmask, indices=rows
        )
    if importlib.util.find_spec("llguidance"):
        from llguidance.torch import apply_token_bitmask_inplace as llg_apply

        impls["llguidance.torch apply (torch.compile)"] = lambda: llg_apply(logits, bitmask)
    print(f"\napply a bitmask to float32 logits [{batch}, {VOCAB}], ms, median of {20 * repeats}")
    for name, fn in impls.items():
        try:
            first = timed(fn)[0]
        except Exception as exc:  # llguidance's goes through torch.compile (needs a C compiler)
            print(f"  {name:44} failed: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        ms = statistics.median(timed(fn)[0] for _ in range(20 * repeats))
        print(f"  {name:44} {ms:8.3f}   (first call {first:.1f})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=64, help="max decode steps per sequence")
    p.add_argument("--repeats", type=int, default=5, help="compile repeats and decode runs")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2, help="torch's and the engines' threads")
    p.add_argument("--ramp", type=float, default=0.5, help="closing-token bias per step")
    p.add_argument("--engines", default="xgrammar,llguidance")
    p.add_argument("--show", action="store_true", help="print each case's batch-1 output")
    args = p.parse_args()
    names = [e for e in args.engines.split(",") if importlib.util.find_spec(e) is not None]
    if not names:
        sys.exit(f"{args.engines}: not importable; install them apart (see this file's docstring)")
    torch.set_num_threads(args.threads)
    pkgs = ("xgrammar", "apache-tvm-ffi", "llguidance", "transformers", "tokenizers", "jsonschema")
    print(f"# loadavg {os.getloadavg()} torch {torch.__version__} threads {args.threads}")
    have = {d.metadata["Name"].lower(): d.version for d in importlib.metadata.distributions()}
    print("# " + ", ".join(f"{k} {have.get(k, 'absent')}" for k in pkgs))
    hf = Tokenizer.from_gguf(smollm2_path()).hf
    pieces = hf.convert_ids_to_tokens(list(range(VOCAB)))
    boost = torch.tensor([s != "" and set(s) <= set('"}],') for s in pieces], dtype=torch.float32)
    quote = torch.tensor(['"' in s for s in pieces])
    boost[hf.eos_token_id], quote[hf.eos_token_id] = 1.0, True
    classes = {"xgrammar": Xgrammar, "llguidance": Llguidance}
    engines: list[Engine] = [classes[e](hf, args.threads) for e in names]
    print("\ntokenizer setup, ms (once): " + ", ".join(f"{e.name} {e.tokenizer_ms:.0f}" for e in engines))  # fmt: skip
    print(f"\ncompile, ms, median of {args.repeats}: cold compile | first mask | cached compile"
          " | new matcher | its first mask")  # fmt: skip
    for case, (kind, spec) in CASES.items():
        for e in engines:
            cols = compile_row(e, kind, spec, args.repeats)
            print(f"  {case:12} {e.name:11}" + "".join(f"{c:9.3f}" for c in cols))
    print(f"\ndecode, {args.repeats} runs of at most {args.steps} steps: fill ms/step (median of"
          " full-batch steps) | fill us/row-step (all) | advance us/row (median) | steps"
          " | tokens allowed at step 0 | output valid | ended")  # fmt: skip
    for case, (kind, spec) in CASES.items():
        for e in engines:
            compiled = e.compile(kind, spec)
            for batch, batched in ((1, False), (args.batch, False), (args.batch, True)):
                runs = [decode(e, compiled, batch, batched, args.steps, (boost, quote), args.ramp,
                               seed) for seed in range(args.repeats)]  # fmt: skip
                texts = [hf.decode([t for t in ts if t != hf.eos_token_id])
                         for r in runs for ts in r["tokens"]]  # fmt: skip
                fill = statistics.median(f for r in runs for f in r["full"])
                per_row = sum(r["fill"] for r in runs) / sum(r["row_steps"] for r in runs) * 1e3
                adv = statistics.median(a for r in runs for a in r["advance"]) * 1e3
                steps = statistics.median(max(map(len, r["tokens"])) for r in runs)
                good, done = sum(valid(kind, spec, t) for t in texts), sum(r["done"] for r in runs)
                mode = f"b{batch}" + (" batch-api" if batched else "")
                print(f"  {case:12} {e.name:11} {mode:13}{fill:8.3f}{per_row:8.1f}{adv:8.1f}"
                      f"{steps:4.0f}{runs[0]['allowed0']:7d}  {good}/{len(texts)} {done}")  # fmt: skip
                if args.show and batch == 1:
                    print(f"      {texts[0]!r}")
    bench_apply(args.batch, args.repeats)
    print(f"\n# loadavg {os.getloadavg()}")


if __name__ == "__main__":
    main()
