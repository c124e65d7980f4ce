"""Several prompts streaming at once through the OnlineScheduler (continuous batching).

Requests join while others are already decoding; each step prints the new text of every request
that produced a token, tagged with its id.

python -m roseinfer.online_example --prompts "Tell me a joke." "What is 2+2?" "Name a color."

Each prompt goes through the model's chat template (`--chat`, the default; `--no-chat`: as it is).
"""

from __future__ import annotations

import argparse
import sys

from roseinfer.config import EngineConfig, add_engine_args


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--prompts",
        nargs="+",
        default=[
            "Tell me a joke.",
            "What is the capital of France?",
            "Write a haiku about the sea.",
        ],
    )
    parser.add_argument(
        "--chat",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="wrap each prompt in the model's chat template (default: on)",
    )
    parser.add_argument(
        "--max-new-tokens", type=int, default=48, help="most tokens per request (default 48)"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    parser.add_argument("--stagger", type=int, default=2, help="steps between request arrivals")
    add_engine_args(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.stagger < 1:  # (max(1, ...) had taken 0 and -5 for 1)
        parser.error(f"--stagger must be >= 1 (steps between arrivals), got {args.stagger}")
    try:
        from roseinfer.compat import InferenceEngine, OnlineScheduler
        from roseinfer.detokenizer import IncrementalDetokenizer

        engine = InferenceEngine(EngineConfig.from_args(args))
        scheduler = OnlineScheduler(engine)
        pending = list(args.prompts)
        detoks: dict[int, IncrementalDetokenizer] = {}
        texts: dict[int, str] = {}
        step = 0
        while pending or scheduler.has_unfinished():
            if pending and step % args.stagger == 0:
                prompt = pending.pop(0)
                ids = (
                    engine.encode_chat([{"role": "user", "content": prompt}])
                    if args.chat
                    else engine.encode_prompt(prompt)
                )
                rid = scheduler.add_request(
                    prompt_token_ids=ids,
                    max_new_tokens=args.max_new_tokens,
                    temperature=args.temperature,
                    do_sample=args.temperature > 0,
                )
                detoks[rid] = IncrementalDetokenizer(engine.tokenizer)
                detoks[rid].start_prompt(ids)
                texts[rid] = ""
                print(f"[step {step}] + request {rid}: {prompt!r}")
            for rid, token in scheduler.step().items():
                piece = detoks[rid].on_token(token)
                if piece:
                    texts[rid] += piece
                    print(f"[step {step}] request {rid}: {piece!r}")
            for rid in scheduler.pop_finished_ids():
                texts[rid] += detoks[rid].flush()
                print(f"[step {step}] request {rid} finished")
                scheduler.discard_request(rid)
            step += 1
    except (ValueError, OSError) as e:
        print(f"online_example: error: {e}", file=sys.stderr)
        return 1
    for rid, text in texts.items():
        print(f"### request {rid}\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
