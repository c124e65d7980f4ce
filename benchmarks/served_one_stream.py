"""One stream served, as a user sees it: the TPOT p50 of `roseinfer bench serve` with one request
at a time (70-token prompts, 128 output tokens, greedy, 8 requests) against the weight-read floor
at the `sum` bandwidth measured just before and just after (the faster of the two: the host's
memory speed can change during a run, and the stricter floor never flatters), per mode and
round. One server at a time on 127.0.0.1; the floor counts SmolLM2's decode weights as
`one_stream.py` does.

Beside each `sum`, what handing a loop between the kernels' two threads costs
(`region_handoff_ns`, µs): ~0.12-0.2 with the two CPUs in one core complex on the AMD host,
~0.6-0.85 in two, where the `sum` reads ~70 GB/s instead of ~45 (BENCHMARKS.md, session 45).

`one_stream.py` times the engine's steps; this adds what serving adds (the HTTP thread's work
for each streamed token shares the two CPUs with the step) and leaves out what its first-step
figure adds (the `sum` before it evicts code, data and page tables from the caches:
BENCHMARKS.md, session 44).

    .venv/bin/python benchmarks/served_one_stream.py [--rounds 2] [--modes bf16,int8,int8+kv8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import torch
from one_stream import WEIGHT_BYTES

from roseinfer.bench.machine import region_handoff_us
from roseinfer.kernels import load_cpu_kernels

ROOT = Path(__file__).resolve().parent.parent
PORT = 8812
SERVER_FLAGS = {
    "bf16": [],
    "int8": ["--quantization", "int8"],
    "int8+kv8": ["--quantization", "int8", "--kv-cache-dtype", "int8"],
}


def read_bandwidth(a: torch.Tensor, repeats: int = 5) -> float:
    """GB/s of `a.sum()`, the median of `repeats` after one untimed."""
    a.sum()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a.sum()
        times.append(time.perf_counter() - start)
    return a.numel() * a.element_size() / statistics.median(times) / 1e9


def wait_healthy(server: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=2):
                return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"the server was not healthy within {timeout_s:.0f} s")


def warm_up() -> None:
    body = {"model": "SmolLM2-135M-Instruct", "prompt": "Hello", "max_tokens": 8, "temperature": 0}
    request = urllib.request.Request(
        f"http://127.0.0.1:{PORT}/v1/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read()


def tpot_p50(seed: int) -> float:
    """The median TPOT (ms) of 8 requests one at a time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "one.json"
        subprocess.run(
            [sys.executable, "-m", "roseinfer.cli", "bench", "serve", "--no-progress",
             "--base-url", f"http://127.0.0.1:{PORT}/v1", "--random-input-len", "70",
             "--random-output-len", "128", "--concurrency", "1", "--num-prompts", "8",
             "--seed", str(seed), "--json", str(out)],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=600,
        )  # fmt: skip
        result = json.loads(out.read_text())["results"][0]
    if result["failed"]:
        raise RuntimeError(f"{result['failed']} of the requests failed")
    return float(result["median_tpot_ms"])


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default="bf16,int8,int8+kv8")
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in SERVER_FLAGS]
    if unknown or args.rounds < 1:
        parser.error(f"--modes from {', '.join(SERVER_FLAGS)}; --rounds >= 1 (got {unknown})")
    a = torch.ones(128 * 1024 * 1024)
    load_cpu_kernels()  # loaded (built where missing) here, so that region_handoff_us reads them
    for round_ in range(1, args.rounds + 1):
        for mode in modes if round_ % 2 else modes[::-1]:
            server = subprocess.Popen(
                [sys.executable, "-m", "roseinfer.server", "--model", "smollm2",
                 "--port", str(PORT), *SERVER_FLAGS[mode]],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                wait_healthy(server)
                warm_up()
                handoffs = [region_handoff_us()]
                before = read_bandwidth(a)
                tpot = tpot_p50(seed=round_)
                after = read_bandwidth(a)
                handoffs.append(region_handoff_us())
            finally:
                server.terminate()
                server.wait(timeout=60)
            key = "bf16" if mode == "bf16" else "int8"
            floor_ms = WEIGHT_BYTES[key] / (max(before, after) * 1e9) * 1e3
            print(f"{mode} served: TPOT p50 {tpot:.2f} ms, {tpot / floor_ms:.2f}x the weight-read "
                  f"floor ({floor_ms:.2f} ms; sum {before:.1f} / {after:.1f} GB/s; handoff "
                  f"{' / '.join(f'{h:.2f}' if h is not None else '-' for h in handoffs)} µs)",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
