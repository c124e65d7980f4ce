"""xgrammar and llguidance on SmolLM2's tokenizer (vocab 49152): tokenizer setup, compile time
per grammar, a decode loop per grammar at batch 1 and 32 timing the bitmask fill and the advance
and checking the output, then applying a bitmask to [32, 49152] float32 logits. Install apart:

    .venv/bin/pip install --target /tmp/gpkgs --no-deps xgrammar llguidance apache-tvm-ffi \\
        jsonschema attrs referencing rpds-py jsonschema-specifications
    PYTHONPATH=/tmp/gpkgs:. .venv/bin/python benchmarks/grammar_engines.py --steps 96 --repeats 5

No model: a step takes the allowed token ranked first by seeded random logits plus, on EOS, `,` `}`
`]` and quote-led tokens like `",` `"}`, --ramp times the steps since the row's last token with a
quote (strings and numbers stay short). Compact JSON. docs/bench/session10/grammar_engines.txt
"""

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

import torch

from roseinfer.loader import smollm2_path
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf

VOCAB = 49152
WORDS = (VOCAB + 31) // 32
BITS = (torch.arange(256)[:, None] >> torch.arange(8)) & 1  # [256, 8]: bit j of byte b
BYTE_BIAS = torch.where(BITS == 1, 0.0, float("-inf"))
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

    def fill(self, ms: list[Any], bitmask: torch.Tensor, rows: list[int], par: bool) -> None:
        if par:
            self.batch.batch_fill_next_token_bitmask(ms, bitmask, rows)
        else:
            for m, i in zip(ms, rows, strict=True):
                m.fill_next_token_bitmask(bitmask, i)

    def advance(self, ms: list[Any], tokens: list[int], par: bool) -> list[bool]:
        if par:
            return self.x.BatchGrammarMatcher.batch_accept_token(ms, tokens)
        return [m.accept_token(t) for m, t in zip(ms, tokens, strict=True)]

    def finished(self, m: Any) -> bool:
        return bool(m.is_terminated())


class Llguidance:
    name, has_cache = "llguidance", False  # no cache: "compiled" is a template matcher to copy

    def __init__(self, hf: Any, threads: int) -> None:
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

    def fill(self, ms: list[Any], bitmask: torch.Tensor, rows: list[int], par: bool) -> None:
        if par:
            pairs = list(zip(ms, rows, strict=True))
            self.gt.fill_next_token_bitmask_par(self.executor, pairs, bitmask)
        else:
            for m, i in zip(ms, rows, strict=True):
                self.gt.fill_next_token_bitmask(m, bitmask, i)

    def advance(self, ms: list[Any], tokens: list[int], par: bool) -> list[bool]:
        if par:
            return self.executor.consume_token_par(list(zip(ms, tokens, strict=True)))
        return [m.consume_token(t) for m, t in zip(ms, tokens, strict=True)]

    def finished(self, m: Any) -> bool:
        return bool(m.is_stopped())


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1e3, out


def apply_plain(logits: torch.Tensor, bitmask: torch.Tensor) -> None:
    """Bit j of int32 word w is token 32w+j: add 0 or -inf, from a table per little-endian byte."""
    bias = torch.nn.functional.embedding(bitmask.view(torch.uint8).long(), BYTE_BIAS)
    logits.add_(bias.view(bitmask.shape[0], -1)[:, : logits.shape[1]])


def compile_row(eng: Xgrammar | Llguidance, kind: str, spec: Any, repeats: int) -> list[float]:
    """Medians: cold compile, its first mask, cached compile, new matcher, that one's first mask."""
    rows, bitmask = [], torch.zeros(1, WORDS, dtype=torch.int32)
    for _ in range(repeats):
        if isinstance(eng, Xgrammar):
            eng.compiler.clear_cache()
        cold, compiled = timed(lambda: eng.compile(kind, spec))
        first = timed(lambda m=eng.matcher(compiled): eng.fill([m], bitmask, [0], False))[0]
        cached = timed(lambda: eng.compile(kind, spec))[0] if eng.has_cache else float("nan")
        new, m = timed(lambda c=compiled: eng.matcher(c))
        warm = timed(lambda m=m: eng.fill([m], bitmask, [0], False))[0]
        rows.append([cold, first, cached, new, warm])
    return [statistics.median(col) for col in zip(*rows, strict=True)]


def decode(eng: Xgrammar | Llguidance, compiled: Any, batch: int, par: bool, steps: int,
           boost: torch.Tensor, quote: torch.Tensor, ramp: float, seed: int) -> dict[str, Any]:  # fmt: skip
    """One generation of `batch` rows; fill times of full-batch steps, totals, tokens."""
    ms = [eng.matcher(compiled) for _ in range(batch)]
    bitmask = torch.zeros(batch, WORDS, dtype=torch.int32)
    gen, run, active = torch.Generator().manual_seed(seed), torch.zeros(batch), list(range(batch))
    out: dict[str, Any] = {"full": [], "fill": 0.0, "advance": []}
    tokens = out["tokens"] = [[] for _ in range(batch)]
    while active and len(out["advance"]) < steps:
        sub = [ms[i] for i in active]
        fill = timed(lambda s=sub, a=active: eng.fill(s, bitmask, a, par))[0]
        if len(active) == batch:
            out["full"].append(fill)
            out.setdefault("allowed0", int(BITS[bitmask[0].view(torch.uint8).long()].sum()))
        out["fill"] += fill
        logits = torch.randn(batch, VOCAB, generator=gen) + ramp * run[:, None] * boost
        apply_plain(logits, bitmask)
        chosen = logits.argmax(-1)[active].tolist()
        adv, ok = timed(lambda s=sub, c=chosen: eng.advance(s, c, par))
        out["advance"].append(adv / len(active))
        if not all(ok):
            raise RuntimeError(f"{eng.name}: a matcher refused a token its mask allowed")
        for i, t in zip(active, chosen, strict=True):
            tokens[i].append(t)
            run[i] = 0 if quote[t] else run[i] + 1
        active = [i for i in active if not eng.finished(ms[i])]
    out["done"] = [eng.finished(m) for m in ms]
    return out


def valid(kind: str, spec: Any, text: str) -> bool:
    if kind != "json":
        return re.fullmatch(spec, text) is not None if kind == "regex" else text in spec
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
    impls = {"plain torch: byte table + add_": lambda: apply_plain(logits, bitmask)}
    if importlib.util.find_spec("xgrammar"):
        from xgrammar import apply_token_bitmask_inplace as xgr_apply

        impls["xgrammar apply_token_bitmask_inplace (cpu)"] = lambda: xgr_apply(logits, bitmask)
        rows = list(range(0, batch, 8))  # the constrained rows of a mixed batch
        impls[f"  same, {len(rows)} rows"] = lambda: xgr_apply(logits, bitmask, indices=rows)
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
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=96, help="max decode steps per sequence")
    p.add_argument("--repeats", type=int, default=5, help="compile repeats and decode runs")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2, help="torch's and the engines' threads")
    p.add_argument("--ramp", type=float, default=2.0, help="closing-token bias per step")
    args = p.parse_args()
    classes = [c for c in (Xgrammar, Llguidance) if importlib.util.find_spec(c.name) is not None]
    if not classes:
        sys.exit("neither xgrammar nor llguidance is importable: install them apart (docstring)")
    torch.set_num_threads(args.threads)
    pkgs = ("xgrammar", "apache-tvm-ffi", "llguidance", "transformers", "tokenizers", "jsonschema")
    have = {d.metadata["Name"].lower(): d.version for d in importlib.metadata.distributions()}
    print(f"# loadavg {os.getloadavg()}, torch {torch.__version__}, threads {args.threads}, "
          + ", ".join(f"{k} {have.get(k, 'absent')}" for k in pkgs))  # fmt: skip
    hf = tokenizer_from_gguf(smollm2_path()).hf
    pieces = hf.convert_ids_to_tokens(list(range(VOCAB)))
    shut = [set(s) <= set('"}],:') and (s[:1] == '"' or len(s) == 1) for s in pieces]
    boost = torch.tensor(shut, dtype=torch.float32)
    quote = torch.tensor(['"' in s for s in pieces])
    boost[hf.eos_token_id], quote[hf.eos_token_id] = 1.0, True
    engines: list[Xgrammar | Llguidance] = [c(hf, args.threads) for c in classes]
    print("\ntokenizer setup, ms: " + ", ".join(f"{e.name} {e.tokenizer_ms:.0f}" for e in engines))
    print(f"\ncompile, ms, median of {args.repeats}: cold compile | first mask | cached compile"
          " | new matcher | its first mask")  # fmt: skip
    for case, (kind, spec) in CASES.items():
        for e in engines:
            cols = compile_row(e, kind, spec, args.repeats)
            print(f"  {case:12} {e.name:11}" + "".join(f"{c:9.3f}" for c in cols))
    print(f"\ndecode, {args.repeats} runs of at most {args.steps} steps: fill ms/step over"
          " full-batch steps: median, mean, max | fill us/row-step (all) | advance us/row | steps"
          " | tokens allowed at step 0 | valid/ended/rows")  # fmt: skip
    for case, (kind, spec) in CASES.items():
        for e in engines:
            compiled = e.compile(kind, spec)
            for batch, par in ((1, False), (args.batch, False), (args.batch, True)):
                runs = [decode(e, compiled, batch, par, args.steps, boost, quote, args.ramp,
                               seed) for seed in range(args.repeats)]  # fmt: skip
                texts = [(hf.decode([t for t in ts if t != hf.eos_token_id]), d) for r in runs
                         for ts, d in zip(r["tokens"], r["done"], strict=True)]  # fmt: skip
                full = [f for r in runs for f in r["full"]]
                fill = f"{statistics.median(full):8.3f}{statistics.mean(full):8.3f}{max(full):8.3f}"
                row_steps = sum(len(ts) for r in runs for ts in r["tokens"])
                per_row = sum(r["fill"] for r in runs) / row_steps * 1e3
                adv = statistics.median(a for r in runs for a in r["advance"]) * 1e3
                steps = statistics.median(max(map(len, r["tokens"])) for r in runs)
                done = [t for t, d in texts if d]
                good = sum(valid(kind, spec, t) for t in done)
                mode = f"b{batch}" + " batch-api" * par
                print(f"  {case:12} {e.name:11} {mode:13}{fill}{per_row:8.1f}{adv:8.1f}"
                      f"{steps:4.0f}{runs[0]['allowed0']:7d}  {good}/{len(done)}/{len(texts)}")  # fmt: skip
                if batch == 1:  # the first run's output
                    print(f"      {texts[0][0][:150]!r}")
    bench_apply(args.batch, args.repeats)
    print(f"\n# loadavg {os.getloadavg()}")


if __name__ == "__main__":
    main()
