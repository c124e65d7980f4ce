"""Compile time of tool calling's grammars (issue 20): each tool_choice mode of the test suite's
two tools (tests/test_tools.py) and of one tool, on SmolLM2's tokenizer, every compile cold (a
new compiler, so nothing is cached; the tokenizer's llguidance view is built once, untimed).

    python benchmarks/tool_grammars.py --repeats 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_tools import ADD, WEATHER  # noqa: E402

from roseinfer.loader import smollm2_path  # noqa: E402
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf  # noqa: E402
from roseinfer.sampling_params import StructuredOutputs  # noqa: E402
from roseinfer.structured.grammar import GrammarCompiler  # noqa: E402
from roseinfer.structured.tools import Tool, ToolUse  # noqa: E402

TOOLS = (Tool("get_weather", "Weather in a city", WEATHER), Tool("add", None, ADD))
CASES = {
    "auto, 2 tools": ToolUse(TOOLS, "auto"),
    "auto, 2 tools, one call": ToolUse(TOOLS, "auto", parallel=False),
    "required, 2 tools": ToolUse(TOOLS, "required"),
    "named (add)": ToolUse(TOOLS, "named", "add"),
    "auto, 1 tool": ToolUse(TOOLS[:1], "auto"),
}


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    tokenizer = tokenizer_from_gguf(smollm2_path())
    first = GrammarCompiler(tokenizer, 49152)
    ll_tokenizer = first.ll_tokenizer  # built once (≈ 0.35 s), shared below
    for name, use in CASES.items():
        spec = StructuredOutputs(grammar=use.grammar())
        times = []
        for _ in range(args.repeats):
            compiler = GrammarCompiler(tokenizer, 49152, ll_tokenizer)  # no grammar cached
            start = time.perf_counter()
            compiler.check(spec)
            times.append(time.perf_counter() - start)
        print(f"{name}: median {1e3 * statistics.median(times):.2f} ms, "
              f"max {1e3 * max(times):.2f} ms ({args.repeats} cold compiles)")  # fmt: skip


if __name__ == "__main__":
    main()
