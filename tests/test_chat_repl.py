"""`roseinfer chat`: slash commands, multi-line messages, Ctrl-C, the history file; driven with
scripted input on the tiny random llama, and once through a real stdin."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from roseinfer.chat_repl import (
    ChatSession,
    Entry,
    UnfinishedMessage,
    enable_line_editing,
    read_entry,
)
from roseinfer.llm import LLM
from roseinfer.sampling_params import SamplingParams

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARAMS = SamplingParams(max_tokens=4, temperature=0.0)  # what `roseinfer chat` samples with


def script(*lines: str | BaseException):
    """An `input` replacement: each call returns the next line (or raises it); then EOFError."""
    pending = list(lines)
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        if not pending:
            raise EOFError
        line = pending.pop(0)
        if isinstance(line, BaseException):
            raise line
        return line

    read.prompts = prompts  # type: ignore[attr-defined]
    read.pending = pending  # type: ignore[attr-defined]
    return read


# ---- reading entries (no model) ------------------------------------------------------------
@pytest.mark.parametrize(
    "lines,entry",
    [
        (["  hello there  "], Entry("hello there")),
        (["/help"], Entry("/help")),
        (['"""', "def f():", "    return 1", '"""'], Entry("def f():\n    return 1", True)),
        (['"""first', "second", 'third"""'], Entry("first\nsecond\nthird", True)),
        (['"""one line"""'], Entry("one line", True)),
        (['"""', "/help is a command", '"""'], Entry("/help is a command", True)),
        (["first \\", "second\\", "third"], Entry("first \nsecond\nthird", True)),
    ],
)
def test_read_entry(lines, entry):
    read = script(*lines)
    assert read_entry(read) == entry
    assert read.pending == []
    assert read.prompts == ["> "] + ["... "] * (len(lines) - 1)


def test_only_a_single_line_can_be_a_command():
    assert Entry("/reset now").command == "/reset"
    assert Entry("/ is a slash").command == "/"
    assert Entry("not /help").command is None
    assert Entry("/help\nmore", multiline=True).command is None


@pytest.mark.parametrize("lines", [['"""', "never closed"], ["a line \\"]])
def test_input_ending_inside_a_message_says_so(lines):
    with pytest.raises(UnfinishedMessage):
        read_entry(script(*lines))


# ---- the loop, on the tiny model -----------------------------------------------------------
@pytest.fixture(scope="module")
def model_dir(tiny_model_dir) -> str:
    return tiny_model_dir("llama")


@pytest.fixture(scope="module")
def llm(model_dir) -> LLM:
    return LLM(model=model_dir, dtype="float32", num_kv_blocks=64)


@pytest.fixture
def sent(llm, monkeypatch) -> list[list[dict]]:
    """The conversations the model was asked to answer (a spy on `encode_chat`)."""
    calls: list[list[dict]] = []
    original = llm.encode_chat

    def spy(messages):
        calls.append([dict(m) for m in messages])
        return original(messages)

    monkeypatch.setattr(llm, "encode_chat", spy)
    return calls


def answer(llm: LLM, conversation: list[dict]) -> str:
    return "".join(llm.stream(llm.encode_chat(conversation), PARAMS))


def test_help_lists_the_commands_and_bye_quits_without_a_reply(llm, sent, capsys):
    read = script("/help", "/bye", "never read")
    assert ChatSession(llm, PARAMS, read=read).run() == 0
    out, err = capsys.readouterr()
    for command in ("/help", "/reset", "/bye", "/exit", '"""', "\\"):
        assert command in err.split("commands:", 1)[1]
    assert out == "" and sent == [] and read.pending == ["never read"]


@pytest.mark.parametrize("quit_with", ["/exit", "  /bye  "])
def test_exit_quits(llm, sent, quit_with):
    session = ChatSession(llm, PARAMS, read=script(quit_with, "hello"))
    assert session.run() == 0 and session.history == [] and sent == []


def test_a_block_reaches_the_model_as_one_message(llm, sent, capsys):
    session = ChatSession(llm, PARAMS, read=script('"""', "line one", "  line two", '"""'))
    assert session.run() == 0
    message = {"role": "user", "content": "line one\n  line two"}
    assert sent == [[message]]
    reply = answer(llm, [message])
    assert session.history == [message, {"role": "assistant", "content": reply}]
    assert capsys.readouterr().out == reply + "\n"


def test_unknown_commands_are_not_sent(llm, sent, capsys):
    session = ChatSession(llm, PARAMS, read=script("/nonsense", "/ is a slash"))
    assert session.run() == 0 and sent == [] and session.history == []
    err = capsys.readouterr().err
    assert "unknown command /nonsense: /help lists them" in err
    assert "unknown command /: /help lists them" in err


def test_reset_keeps_the_system_prompt(llm, sent):
    system = {"role": "system", "content": "Be brief."}
    session = ChatSession(llm, PARAMS, "Be brief.", read=script("hi", "/reset", "hello", "/clear"))
    assert session.run() == 0
    assert [c[-1]["content"] for c in sent] == ["hi", "hello"]
    assert sent[1][:-1] == [system]  # "hi" and its reply were forgotten
    assert session.history == [system]


def test_an_empty_system_prompt_is_sent(llm, sent):
    """`--system ""` is an empty system message: it had been dropped, and the template's own
    default system prompt (SmolLM2's names the model) went in instead."""
    session = ChatSession(llm, PARAMS, "", read=script("hi"))
    assert session.run() == 0
    assert sent[0] == [{"role": "system", "content": ""}, {"role": "user", "content": "hi"}]


def test_ctrl_c_at_the_prompt_goes_on(llm, sent, capsys):
    session = ChatSession(llm, PARAMS, read=script(KeyboardInterrupt(), "hi"))
    assert session.run() == 0
    assert "/bye to quit" in capsys.readouterr().err
    assert [c[-1]["content"] for c in sent] == ["hi"]


def test_ctrl_c_stops_a_reply_and_leaves_no_trace(llm, monkeypatch, capsys):
    stream = llm.stream

    def interrupted(ids, params):
        pieces = stream(ids, params)
        yield next(pieces)
        raise KeyboardInterrupt

    monkeypatch.setattr(llm, "stream", interrupted)
    session = ChatSession(llm, SamplingParams(max_tokens=16, ignore_eos=True), read=script("hi"))
    assert session.run() == 0
    assert "(stopped)" in capsys.readouterr().err
    assert session.history == [] and not llm.engine.has_unfinished()


def test_history_file_is_written_and_an_unwritable_one_is_no_error(tmp_path):
    readline = pytest.importorskip("readline")
    readline.clear_history()
    try:
        path = tmp_path / "history"
        save = enable_line_editing(str(path))
        assert save is not None
        readline.add_history("an earlier question")
        save()
        readline.clear_history()
        enable_line_editing(str(path))
        assert readline.get_history_item(readline.get_current_history_length()) == (
            "an earlier question"
        )
        nowhere = enable_line_editing(str(tmp_path / "missing" / "dir" / "history"))
        assert nowhere is not None
        nowhere()  # cannot be written: quietly kept for the session only
        assert not (tmp_path / "missing").exists()
    finally:
        readline.clear_history()


def test_roseinfer_chat_through_stdin(model_dir, llm):
    """A real process: the prompts and the one reply on stdout, the help on stderr, exit 0."""
    typed = '/help\n"""\nhello\nworld\n"""\n/bye\nnever sent\n'
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.cli", "chat", "--model", model_dir, "--dtype", "float32",
         "--num-kv-blocks", "64", "--max-new-tokens", str(PARAMS.max_tokens)],
        input=typed, cwd=ROOT, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    reply = answer(llm, [{"role": "user", "content": "hello\nworld"}])
    # One prompt per line read; "never sent" was not.
    assert r.stdout == "> " + "> " + "... " * 3 + reply + "\n" + "> "
    assert "/reset" in r.stderr and "Traceback" not in r.stderr
