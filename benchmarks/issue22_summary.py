"""Issue 22's goals from one `benchmarks/issue22_goals.sh` run: each goal's ratio in every round
(vLLM and OpenVINO measured in the same round), and whether it is met.

    .venv/bin/python benchmarks/issue22_summary.py OUT_DIR
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

SERVED = re.compile(
    r"^\S+ (?P<label>\S+)\s+(?P<case>\S+)\s+out tok/s (?P<tok>[\d.]+), TTFT p50 (?P<ttft>[\d.]+) ms"
)
OFFLINE = re.compile(r"^(?P<label>rose \S+|openvino \S+): .*?(?P<tok>[\d.]+) (?:output )?tok/s")
ONE = re.compile(
    r"^(?P<mode>\S+)(?P<in_a_row> \(the \d+ steps? after the first, in a row\))?: step [\d.]+ ms, "
    r"(?P<ratio>[\d.]+)x that round's floor"
)
SERVED_ONE = re.compile(r"^(?P<mode>\S+) served: TPOT p50 [\d.]+ ms, (?P<ratio>[\d.]+)x the weight")


@dataclass(frozen=True)
class Goal:
    name: str
    bound: float
    at_least: bool  # else at most

    def line(self, ratios: list[float]) -> str:
        met = all(r >= self.bound if self.at_least else r <= self.bound for r in ratios)
        shown = " / ".join(f"{r:.2f}x" for r in ratios) or "not measured"
        sign = ">=" if self.at_least else "<="
        verdict = "met" if ratios and met else "NOT met" if ratios else "-"
        return f"{self.name} ({sign} {self.bound}x): {shown}: {verdict}"


# Issue 22's goals, in the order the summary prints them.
GOALS = (
    Goal("32 streams, bf16", 1.5, True),
    Goal("32 streams, fastest (int8 + int8 KV)", 2.0, True),
    Goal("2,000-token TTFT, bf16", 0.8, False),
    Goal("2,000-token TTFT, int8 + int8 KV", 0.8, False),
    Goal("8 such prompts at once, bf16", 1.25, True),
    Goal("8 such prompts at once, int8 + int8 KV", 1.25, True),
    Goal("offline bf16 vs OpenVINO fp16", 1.3, True),
    Goal("offline int8 + int8 KV vs OpenVINO int8", 1.5, True),
    Goal("offline int8 vs OpenVINO int8", 1.5, True),
    Goal("one stream, bf16, of the weight-read floor", 1.25, False),
    Goal("one stream, int8, of the weight-read floor", 1.25, False),
    Goal("one stream, int8+kv8, of the weight-read floor", 1.25, False),
    # The same goal, two more ways: the engine's steps after the first (its caches warm, as a
    # stream's steps follow each other), and served (TPOT p50 one request at a time).
    Goal("one stream in a row, bf16, of the weight-read floor", 1.25, False),
    Goal("one stream in a row, int8, of the weight-read floor", 1.25, False),
    Goal("one stream in a row, int8+kv8, of the weight-read floor", 1.25, False),
    Goal("one stream served, bf16, of the weight-read floor", 1.25, False),
    Goal("one stream served, int8, of the weight-read floor", 1.25, False),
    Goal("one stream served, int8+kv8, of the weight-read floor", 1.25, False),
)
GOAL_NAMES = {goal.name for goal in GOALS}


def served(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(server, case) -> (output tok/s, TTFT p50 ms) of one round."""
    found = {}
    for line in path.read_text().splitlines():
        if m := SERVED.match(line):
            found[m["label"], m["case"]] = (float(m["tok"]), float(m["ttft"]))
    return found


def offline(path: Path) -> dict[str, float]:
    return {
        m["label"]: float(m["tok"])
        for line in path.read_text().splitlines()
        if (m := OFFLINE.match(line))
    }


def served_ratio(
    round_: dict[tuple[str, str], tuple[float, float]], server: str, case: str, ttft: bool = False
) -> float | None:
    """Our server's output tok/s over vLLM's in one case of one round (TTFT: ours over theirs)."""
    ours, theirs = round_.get((server, case)), round_.get(("vllm_bf16", case))
    if ours is None or theirs is None:
        return None
    return ours[1] / theirs[1] if ttft else ours[0] / theirs[0]


def main(argv: list[str] | None = None) -> None:
    out = Path((sys.argv[1:] if argv is None else argv)[0])
    rounds = sorted(out.glob("served_*.txt"), key=lambda p: int(p.stem.split("_")[1]))
    ratios: dict[str, list[float]] = {}

    def add(goal: str, value: float | None) -> None:
        if goal not in GOAL_NAMES:  # a name spelled apart from GOALS would never be reported
            raise ValueError(f"no goal named {goal!r}")
        if value is not None:
            ratios.setdefault(goal, []).append(value)

    for path in rounds:
        s = served(path)
        add("32 streams, bf16", served_ratio(s, "rose_bf16", "short"))
        add("32 streams, fastest (int8 + int8 KV)", served_ratio(s, "rose_int8_kv8", "short"))
        add("2,000-token TTFT, bf16", served_ratio(s, "rose_bf16", "long-prompt", ttft=True))
        add(
            "2,000-token TTFT, int8 + int8 KV",
            served_ratio(s, "rose_int8_kv8", "long-prompt", ttft=True),
        )
        add("8 such prompts at once, bf16", served_ratio(s, "rose_bf16", "long-prompt-8"))
        add(
            "8 such prompts at once, int8 + int8 KV",
            served_ratio(s, "rose_int8_kv8", "long-prompt-8"),
        )
        off = out / f"offline_{path.stem.split('_')[1]}.txt"
        if off.exists():
            o = offline(off)
            fp16, int8 = o.get("openvino fp16"), o.get("openvino int8")
            if fp16 and "rose bf16" in o:
                add("offline bf16 vs OpenVINO fp16", o["rose bf16"] / fp16)
            if int8 and "rose int8+kv8" in o:
                add("offline int8 + int8 KV vs OpenVINO int8", o["rose int8+kv8"] / int8)
            if int8 and "rose int8" in o:
                add("offline int8 vs OpenVINO int8", o["rose int8"] / int8)
    one = out / "one_stream.txt"
    if one.exists():
        for line in one.read_text().splitlines():
            if m := ONE.match(line):
                how = " in a row" if m["in_a_row"] else ""
                add(f"one stream{how}, {m['mode']}, of the weight-read floor", float(m["ratio"]))
            elif line.startswith("read bandwidth"):
                print(f"one stream's {line}")
    one_served = out / "one_stream_served.txt"
    if one_served.exists():
        for line in one_served.read_text().splitlines():
            if m := SERVED_ONE.match(line):
                add(f"one stream served, {m['mode']}, of the weight-read floor", float(m["ratio"]))
    host = out / "host.txt"
    if host.exists():
        print(host.read_text().strip())
    for goal in GOALS:
        print(goal.line(ratios.get(goal.name, [])))


if __name__ == "__main__":
    main()
