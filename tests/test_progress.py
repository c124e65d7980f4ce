"""Progress output: tqdm's bar on a terminal, whole lines (no '\\r' redraws) anywhere else."""

from __future__ import annotations

import io
import time

import pytest

from roseinfer.llm import LLM
from roseinfer.progress import LineProgress, progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_tqdm_s_redrawn_bar():
    out = Terminal()
    with progress(2, "Generating", "req", file=out) as bar:
        bar.update(1)
        bar.update(1)
    assert not isinstance(bar, LineProgress) and "\r" in out.getvalue()


def test_elsewhere_each_stage_and_the_end_are_lines():
    out = io.StringIO()
    with progress(3, "Loading: reading", "stage", file=out) as bar:
        assert isinstance(bar, LineProgress)
        bar.update()
        bar.set_description("Loading: building")
        bar.update()
        bar.update()
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert [line.split(" [")[0] for line in lines] == [
        "Loading: reading", "Loading: building", "Loading: building",
    ]  # fmt: skip
    assert lines[-1].startswith("Loading: building [3/3 stage, ")


def test_counts_are_printed_at_most_once_per_interval():
    out = io.StringIO()
    bar = LineProgress(100, "Generating", "req", file=out, interval=3600)
    for _ in range(100):
        bar.update()
    bar.close()
    bar.close()
    assert [line.split(",")[0] for line in out.getvalue().splitlines()] == [
        "Generating [0/100 req", "Generating [100/100 req",
    ]  # fmt: skip


def test_delay_keeps_quick_work_silent_and_slow_work_visible():
    quick = io.StringIO()
    with progress(3, "Loading", "stage", delay=60, leave=False, file=quick) as bar:
        bar.set_description("Loading: next")
        bar.update()
    assert quick.getvalue() == ""

    slow = io.StringIO()
    with progress(3, "Loading", "stage", delay=0.05, leave=False, file=slow) as bar:
        time.sleep(0.1)
        bar.set_description("Loading: next")
        bar.update(3)
    # The stage that began after the delay is shown; leave=False: no closing line.
    assert [line.split(" [")[0] for line in slow.getvalue().splitlines()] == ["Loading: next"]


def test_disabled_prints_nothing():
    out = io.StringIO()
    with progress(2, "x", disable=True, file=out) as bar:
        bar.update(2)
    assert out.getvalue() == ""


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return LLM(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)


def test_generate_reports_progress_as_lines_on_a_captured_stderr(llm, capsys):
    from roseinfer.sampling_params import SamplingParams

    llm.generate(["a b", "c d"], SamplingParams(max_tokens=2))
    err = capsys.readouterr().err
    assert "\r" not in err and "Generating [2/2 req, " in err
