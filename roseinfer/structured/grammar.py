"""llguidance behind one small interface: a grammar per request, a matcher per sequence, and the
allowed-token bitmask of a batch applied to its logits.

The tokenizer's llguidance view is built once per engine, on the first constrained request
(≈ 0.35 s for a 49k vocabulary). Compiling a grammar takes about a millisecond; requests are
compiled (and refused with the compiler's message) when they are validated, before admission,
and the engine loop only copies the compiled matcher.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from roseinfer.config import StructuredOutputs
from roseinfer.tokenizer import Tokenizer

if TYPE_CHECKING:
    from llguidance._lib import JsonCompileOptions


class GrammarError(ValueError):
    """A schema, regex or grammar llguidance cannot compile (the message says why)."""


def grammar_text(spec: StructuredOutputs) -> str:
    """The llguidance grammar of a request's constraint (JSON is compact: no free whitespace)."""
    import llguidance

    options: JsonCompileOptions = {"whitespace_flexible": False}
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
        return llguidance.grammar_from("grammar", spec.grammar)
    except (ValueError, TypeError, RuntimeError) as e:
        raise GrammarError(str(e)) from None


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
        self._templates: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()  # any thread may check

    @property
    def ll_tokenizer(self) -> Any:
        with self._lock:
            if self._ll_tokenizer is None:
                import llguidance.hf

                # Every end-of-sequence / end-of-turn id ends a grammar that is complete (the
                # HF tokenizer names one: SmolLM2's <|endoftext|> would otherwise be masked).
                self._ll_tokenizer = llguidance.hf.from_tokenizer(
                    self.tokenizer.hf,
                    n_vocab=self.vocab_size,
                    eos_token=sorted(self.tokenizer.stop_token_ids) or None,
                )
            return self._ll_tokenizer

    def check(self, spec: StructuredOutputs) -> Any:
        """The compiled template matcher of `spec`, or GrammarError with llguidance's message."""
        import llguidance

        text = grammar_text(spec)
        with self._lock:
            template = self._templates.get(text)
            if template is not None:
                self._templates.move_to_end(text)
                return template
        template = llguidance.LLMatcher(self.ll_tokenizer, text, log_level=0)
        if template.is_error():
            raise GrammarError(template.get_error())
        with self._lock:
            self._templates[text] = template
            while len(self._templates) > self.CACHE_SIZE:
                self._templates.popitem(last=False)
        return template

    def matcher(self, spec: StructuredOutputs) -> Any:
        """A fresh matcher for one sequence."""
        return self.check(spec).deep_copy()


def fill_bitmask(matchers: Sequence[Any], vocab_size: int) -> torch.Tensor:
    """The tokens each matcher's grammar allows next: int32 [R, ceil(V / 32)], bit j of word w
    set when token 32w + j is allowed (llguidance's layout)."""
    bitmask = torch.empty(len(matchers), (vocab_size + 31) // 32, dtype=torch.int32)
    for i, m in enumerate(matchers):
        row = bitmask[i]
        m.unsafe_compute_mask_ptr(row.data_ptr(), row.numel() * 4)
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
