"""llguidance behind one small interface: a grammar per request, a matcher per sequence, and the
allowed-token bitmask of a batch applied to its logits.

The tokenizer's llguidance view is built once per engine, on the first constrained request
(≈ 0.35 s for a 49k vocabulary). Compiling a grammar takes about a millisecond; requests are
compiled (and refused with the compiler's message) when they are validated, before admission,
and the engine loop only copies the compiled matcher.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, cast

import torch

from roseinfer.structured.params import StructuredOutputs
from roseinfer.structured.tools import COMPACT
from roseinfer.tokenizer import Tokenizer

if TYPE_CHECKING:
    from llguidance._lib import JsonCompileOptions

# A `grammar` (Lark or GBNF) of more characters is refused: llguidance's compiler recurses once
# per level of rule nesting, and the characters bound the levels (below). The JSON schemas a
# grammar embeds (`%json {...}`, as the tools' grammar does) are not counted: llguidance's JSON
# compiler holds them to 128 levels itself.
MAX_GRAMMAR_CHARS = 64 * 1024
# Stack of the thread each compile runs on (address space; memory only as it is touched). The
# compiler takes 2.5-4 KB of stack per level of rule nesting: a 2,750-rule chain (100 KB of Lark)
# overflowed a default 8 MB thread stack and killed the process (a segfault). The deepest
# MAX_GRAMMAR_CHARS grammar, a chain of one-reference rules (`ab: ac`, 7,437 levels), compiles
# on 32 MB: this is 8x that.
COMPILE_STACK_BYTES = 256 << 20
_stack_size_lock = threading.Lock()  # threading.stack_size is the process's, for new threads


class GrammarError(ValueError):
    """A schema, regex or grammar llguidance cannot compile (the message says why)."""


def grammar_failure(matcher: Any) -> str | None:
    """Why a matcher (a template's copy) is in its error state, in one line; None if it is not.
    A grammar can pass its compile and fail later: a row of more alternatives than llguidance's
    parser takes, a lexer out of its limits. That ends the request (its own doing)."""
    if not matcher.is_error():
        return None
    first_line = (matcher.get_error() or "unknown error").splitlines()[0]
    return f"the grammar failed in llguidance: {first_line}"


def grammar_text(spec: StructuredOutputs) -> str:
    """The llguidance grammar of a request's constraint (JSON is compact: no free whitespace),
    after a thinking block where `spec.thinking_first` says so."""
    text = _constraint_text(spec)
    return text if spec.thinking_first is None else _after_thinking(text, spec.thinking_first)


def _after_thinking(text: str, mode: str) -> str:
    """`text`'s grammar after free text up to the first `</think>`: required, or, `optional`,
    only where the output opens with `<think>`. One llguidance grammar that names the
    constraint's as its second (a lazy rule ends the thinking at its first close; the blank
    space a model writes after `</think>` is the constraint's to allow, as an answer may open
    with blank space of its own)."""
    top = json.loads(text) if text.lstrip().startswith("{") else {
        "grammars": [{"name": "answer", "lark_grammar": text}]
    }  # fmt: skip
    first = top["grammars"][0]
    name = first.setdefault("name", "answer") or "answer"
    first["name"] = name
    block = "thinking" if mode == "required" else '("<think>" thinking)?'
    lark = (f"%llguidance {{}}\nstart: {block} @{name}\n"
            'thinking[lazy]: TEXT "</think>"\nTEXT: /(.|\\n)*/\n')  # fmt: skip
    return json.dumps({**top, "grammars": [{"name": "after_thinking", "lark_grammar": lark},
                                           *top["grammars"]]})  # fmt: skip


def _constraint_text(spec: StructuredOutputs) -> str:
    import llguidance

    from roseinfer.structured.gbnf import gbnf_to_lark, is_lark_syntax

    options = cast("JsonCompileOptions", COMPACT)
    if spec.grammar is not None:
        if (chars := _rule_chars(spec.grammar)) > MAX_GRAMMAR_CHARS:
            raise GrammarError(
                f"the grammar has {chars} characters (outside its %json schemas); at most "
                f"{MAX_GRAMMAR_CHARS}"
            )
    try:
        if spec.json_object:
            return llguidance.LLMatcher.grammar_from_json_schema(
                {"type": "object"}, overrides=options
            )
        if spec.json is not None:
            schema = json.loads(spec.json) if isinstance(spec.json, str) else spec.json
            return llguidance.LLMatcher.grammar_from_json_schema(schema, overrides=options)
        if spec.regex is not None:
            return llguidance.LLMatcher.grammar_from_regex(spec.regex)
        if spec.choice is not None:
            return llguidance.grammar_from("choice", json.dumps(list(spec.choice)))
        assert spec.grammar is not None
        if is_lark_syntax(spec.grammar):
            return llguidance.LLMatcher.grammar_from_lark(spec.grammar)
        try:
            lark = gbnf_to_lark(spec.grammar)
        except Exception as e:  # the converter raises plain Exceptions for missing rules
            raise GrammarError(f"Failed to convert the grammar from GBNF to Lark: {e}") from None
        return llguidance.LLMatcher.grammar_from_lark(lark)
    except (ValueError, TypeError, RuntimeError) as e:
        raise GrammarError(str(e)) from None


def _rule_chars(grammar: str) -> int:
    """The characters of `grammar` outside the JSON schemas it embeds with `%json`."""
    decoder = json.JSONDecoder()
    count = start = 0
    while (found := grammar.find("%json", start)) >= 0:
        count += found - start
        schema = found + len("%json")
        while schema < len(grammar) and grammar[schema].isspace():
            schema += 1
        try:
            _, start = decoder.raw_decode(grammar, schema)
        except (ValueError, RecursionError):  # not a schema: counted as rules
            start = schema
            count += schema - found
    return count + len(grammar) - start


class GrammarCompiler:
    """Grammars to matchers for one engine's tokenizer and vocabulary.

    `check` compiles (on the caller's thread: the server's worker threads, never the engine
    loop) and keeps the compiled matcher, by grammar text, as a template; `matcher` hands each
    sequence a copy of it (microseconds)."""

    CACHE_SIZE = 256

    def __init__(self, tokenizer: Tokenizer, vocab_size: int, ll_tokenizer: Any = None) -> None:
        """`ll_tokenizer`: the tokenizer's llguidance view, when another compiler built it."""
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self._ll_tokenizer: Any = ll_tokenizer
        self._templates: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()  # any thread may check

    @property
    def ll_tokenizer(self) -> Any:
        with self._lock:
            if self._ll_tokenizer is None:
                import llguidance

                # Every end-of-sequence / end-of-turn id ends a grammar that is complete (the
                # HF tokenizer names one: SmolLM2's <|endoftext|> would otherwise be masked).
                self._ll_tokenizer = llguidance.LLTokenizer(
                    _llguidance_tokenizer_json(self.tokenizer.hf, self.tokenizer.stop_token_ids),
                    n_vocab=self.vocab_size,
                    eos_token=sorted(self.tokenizer.stop_token_ids) or None,
                )
            return self._ll_tokenizer

    def check(self, spec: StructuredOutputs) -> Any:
        """The compiled template matcher of `spec`, or GrammarError with llguidance's message.
        Cached by the constraint as given: a hit converts nothing (GBNF's conversion to Lark
        is Python holding the GIL, and the engine loop checks each request again)."""
        key = spec.key
        with self._lock:
            template = self._templates.get(key)
            if template is not None:
                self._templates.move_to_end(key)
                return template
        if spec.thinking_first is not None:  # the constraint alone first: its own errors, and
            # a language with no text (which the free thinking before it would hide)
            self.check(dataclasses.replace(spec, thinking_first=None))
        text = grammar_text(spec)
        template = _compile(self.ll_tokenizer, text)
        if template.is_error():
            raise GrammarError(template.get_error())
        # A grammar whose first token already fails (a language with no text in it) is refused
        # here, not found by the sampler; the probe's copy warms the template's lexer too.
        probe = template.deep_copy()
        probe.compute_bitmask()
        if (failure := grammar_failure(probe)) is not None:
            raise GrammarError(f"no text meets the constraint ({failure})")
        with self._lock:
            self._templates[key] = template
            while len(self._templates) > self.CACHE_SIZE:
                self._templates.popitem(last=False)
        return template

    def matcher(self, spec: StructuredOutputs) -> Any:
        """A fresh matcher for one sequence. Copies share their template's lexer: once one has
        run it out of llguidance's limits, later copies fail at their first token, each ending
        its request with llguidance's reason (`grammar_failure`) as the first did."""
        return self.check(spec).deep_copy()


def _llguidance_tokenizer_json(hf: Any, stop_ids: Collection[int]) -> str:
    """The tokenizer as llguidance reads it (`llguidance.hf.from_tokenizer`'s JSON), with the
    added tokens that are text (not special: Qwen's `<think>`, `<tool_call>`) moved into a BPE
    vocabulary: llguidance takes every added token for a special one, which no grammar's text
    matches, so under tools' "auto" grammar a Qwen3 could not open its thinking, nor Qwen2.5
    write `<tool_call>` as the one token it was trained to. (Only printable ASCII without
    spaces, which both byte-level and SentencePiece vocabularies spell as is; never a stop
    token, which as text could end a constrained answer halfway. A grammar that names such a
    token as a special one, `<think>`, writes it as text, `"<think>"`, or by id, `<[id]>`.)"""
    import copy

    if not hasattr(hf, "backend_tokenizer"):
        raise ValueError("Only fast tokenizers are supported")  # (llguidance's words)
    backend = copy.copy(hf.backend_tokenizer)
    backend.no_padding()
    backend.no_truncation()
    data = json.loads(backend.to_str())
    vocab = data.get("model", {}).get("vocab")
    if data.get("model", {}).get("type") != "BPE" or not isinstance(vocab, dict):
        return backend.to_str()
    kept = []
    for token in data.get("added_tokens", []):
        text = token["content"]
        if (token["special"] or token["id"] in stop_ids or not (text.isascii() and text.isprintable())
                or " " in text):  # fmt: skip
            kept.append(token)
        elif vocab.setdefault(text, token["id"]) != token["id"]:
            kept.append(token)  # (its text is another token's already)
    data["added_tokens"] = kept
    return json.dumps(data)


def _compile(ll_tokenizer: Any, text: str) -> Any:
    """llguidance's compile of `text`, on a thread of COMPILE_STACK_BYTES of stack (waited for:
    the caller is a worker thread already, or the Python API's own)."""
    import llguidance

    # Short errors: verbose ones repeat the whole grammar and the parser's state (270 KB).
    limits = llguidance.LLParserLimits(verbose_errors=False)
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(llguidance.LLMatcher(ll_tokenizer, text, log_level=0, limits=limits))
        except Exception as e:  # llguidance raises only when misused: the caller's to raise
            result.append(e)

    with _stack_size_lock:
        previous = threading.stack_size(COMPILE_STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name="roseinfer-grammar-compile", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if isinstance(result[0], Exception):
        raise result[0]
    return result[0]


def fill_bitmask(matchers: Sequence[Any], vocab_size: int) -> torch.Tensor:
    """The tokens each matcher's grammar allows next: int32 [R, ceil(V / 32)], bit j of word w
    set when token 32w + j is allowed (llguidance's layout). No token for a matcher in its error
    state (`grammar_failure`), whose own mask would allow only the end of sequence: an empty
    reply ending "stop", as if the grammar were met."""
    bitmask = torch.empty(len(matchers), (vocab_size + 31) // 32, dtype=torch.int32)
    for i, m in enumerate(matchers):
        row = bitmask[i]
        m.unsafe_compute_mask_ptr(row.data_ptr(), row.numel() * 4)
        if m.is_error():
            row.zero_()
    return bitmask


# bit j of byte b, as 0 or -inf: a bitmask of bytes becomes additive logit masks by lookup
_BYTE_MASK = torch.where(
    ((torch.arange(256)[:, None] >> torch.arange(8)) & 1) == 1, 0.0, float("-inf")
)


def apply_bitmask(logits: torch.Tensor, bitmask: torch.Tensor, rows: torch.Tensor) -> None:
    """-inf, in place, in logits row `rows[i]` for the tokens bitmask row i forbids. logits
    [B, V], bitmask int32 [R, ceil(V / 32)] (`fill_bitmask`), rows int64 [R]. The plain-PyTorch
    version of the CPU kernel's (`Backend.apply_bitmask`)."""
    vocab = logits.shape[1]
    masks = _BYTE_MASK.to(logits.device)[bitmask.view(torch.uint8).long()]  # [R, W * 4, 8]
    masks = masks.view(len(rows), -1)[:, :vocab].to(logits.dtype)
    index = rows.to(logits.device)
    logits[index] = logits[index] + masks
