"""Quality of int8 weights (`--quantization int8`; with activations rounded to int8 too on CPUs
with VNNI and no AMX) against bf16 on the same model, or with
`--kv-cache-dtype int8` of the int8 KV cache against the bf16 one (bf16 weights both), or with
both flags of the two together (the fastest serving mode) against bf16 weights and cache.

Reports greedy token agreement on a prompt set and the perplexity of a small text under each.

    .venv/bin/python benchmarks/int8_quality.py [--model smollm2] [--max-new-tokens 64]
    .venv/bin/python benchmarks/int8_quality.py --kv-cache-dtype int8
    .venv/bin/python benchmarks/int8_quality.py --quantization int8 --kv-cache-dtype int8
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import torch

from roseinfer.engine import InferenceEngine
from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.model_runner import ModelRunner
from roseinfer.engine.scheduler import ScheduledSequence
from roseinfer.engine.sequence import Sequence
from roseinfer.sampling_params import SamplingParams

PROMPTS = [
    "What is the capital of France?",
    "Write a short poem about the sea.",
    "Explain what a CPU cache is in two sentences.",
    "List three fruits.",
    "How do I reverse a list in Python?",
    "Who wrote Romeo and Juliet?",
    "Give me a tip for learning a new language.",
    "What is 12 times 7?",
]

TEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named "
    "after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. "
    "Locally nicknamed the Iron Lady, it was constructed as the centrepiece of the 1889 World's Fair, and to "
    "crown the centennial anniversary of the French Revolution. Although initially criticised by some of "
    "France's leading artists and intellectuals for its design, it has since become a global cultural icon "
    "of France and one of the most recognisable structures in the world."
)


def perplexity(engine: InferenceEngine, text: str) -> float:
    """Of `text` prefilled in one step (on CPU its tokens attend through the decode kernel, so
    an int8 cache's rounded K/V are what they see)."""
    ids = engine.tokenizer.encode(text)
    blocks = BlockManager(-(-len(ids) // 16), 16, enable_prefix_cache=False)
    config = dataclasses.replace(engine.config, block_size=16)
    runner = ModelRunner(engine.loaded, config, blocks.num_blocks)
    seq = Sequence(0, ids, len(ids), SamplingParams())
    blocks.allocate(seq, len(ids))
    logits = runner.compute_logits(
        [ScheduledSequence(seq, len(ids))], all_positions=True
    ).float()  # [T, V]
    nll = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
    return math.exp(nll.item())


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument(
        "--kv-cache-dtype",
        choices=["auto", "int8"],
        default="auto",
        help="int8: compare the int8 KV cache with the bf16 one instead of int8 weights",
    )
    parser.add_argument(
        "--quantization",
        choices=["none", "int8"],
        default=None,
        help="the weights compared with bf16 (default: int8, or none with --kv-cache-dtype int8)",
    )
    args = parser.parse_args()
    quantization = args.quantization or ("none" if args.kv_cache_dtype == "int8" else "int8")
    if quantization == "none" and args.kv_cache_dtype == "auto":
        parser.error("nothing to compare: bf16 weights and cache on both sides")
    quantized = {
        k: v
        for k, v in (("quantization", quantization), ("kv_cache_dtype", args.kv_cache_dtype))
        if v not in ("none", "auto")
    }
    engines = {
        q: InferenceEngine(model=args.model, dtype="bfloat16", **(quantized if q == "int8" else {}))
        for q in ("none", "int8")
    }
    print("int8:", ", ".join(f"{k}={v}" for k, v in quantized.items()))
    params = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=0)
    same = total = identical = 0
    for prompt in PROMPTS:
        outs = {
            q: e.generate_ids(e.encode_chat([{"role": "user", "content": prompt}]), params)
            for q, e in engines.items()
        }
        a, b = outs["none"], outs["int8"]
        # Agreement up to the first divergence, then the rest counts as disagreeing.
        prefix = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        same += prefix
        total += max(len(a), len(b))
        identical += a == b
    ppl = {q: perplexity(e, TEXT) for q, e in engines.items()}
    print(f"prompts: {len(PROMPTS)}, greedy outputs identical: {identical}/{len(PROMPTS)}")
    print(f"token agreement (up to first divergence): {same}/{total} = {same / total:.1%}")
    print(
        f"perplexity bf16: {ppl['none']:.3f}  int8: {ppl['int8']:.3f}  change: {ppl['int8'] / ppl['none'] - 1:+.2%}"
    )


if __name__ == "__main__":
    main()
