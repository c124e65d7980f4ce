"""The seeds' offline example: several prompts through the OfflineScheduler.

python -m roseinfer.offline_example --prompts "hi, " "hello," --max-new-tokens 100 \
    --temperature 0.8 --top-p 0.95 --do-sample
"""

from __future__ import annotations

import argparse
import sys

from roseinfer.config import EngineConfig, add_engine_args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--prompts", nargs="+", required=True)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=0)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--do-sample", action="store_true")
    add_engine_args(parser)
    args = parser.parse_args(argv)
    try:
        from roseinfer.compat import InferenceEngine, OfflineScheduler

        engine = InferenceEngine(EngineConfig.from_args(args))
        scheduler = OfflineScheduler(engine)
        rids = [
            scheduler.add_request(
                p,
                max_new_tokens=args.max_new_tokens,
                temperature=args.temperature,
                top_k=args.top_k,
                top_p=args.top_p,
                do_sample=args.do_sample,
            )
            for p in args.prompts
        ]
        outputs = scheduler.run()
    except (ValueError, OSError) as e:
        print(f"offline_example: error: {e}", file=sys.stderr)
        return 1
    for i, rid in enumerate(rids):
        print(f"### request {i}")
        print(outputs[rid])
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
