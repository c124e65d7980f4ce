"""What a model's chat template reads: the variables it names (Jinja's undeclared ones), so that
a request's `chat_template_kwargs` naming one it never reads is refused rather than ignored."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from roseinfer.tokenizer import Tokenizer, TokenizerError


def reads_variable(tokenizer: Tokenizer, messages: list[dict], name: str, value: Any) -> bool:
    """Whether the template reads `name`: among its variables, or, for a template Jinja cannot
    parse, whether setting it to `value` changes the render of `messages`."""
    variables = template_variables(tokenizer)
    if variables is not None:
        return name in variables
    return not _renders_same(tokenizer, messages, {name: value})


def _renders_same(tokenizer: Tokenizer, messages: list[dict], kwargs: dict) -> bool:
    try:
        return tokenizer.apply_chat_template(messages, **kwargs) == (
            tokenizer.apply_chat_template(messages)
        )
    except TokenizerError:
        return False  # the template used it (and refused the value): the render will say so


def template_source(tokenizer: Tokenizer) -> str:
    """The chat template's text ("" without one)."""
    source = getattr(tokenizer.hf, "chat_template", None)
    if isinstance(source, dict):
        source = source.get("default")
    return source or ""


def template_variables(tokenizer: Tokenizer) -> frozenset[str] | None:
    """The variables the chat template reads; empty without a template, None if unparsable."""
    source = template_source(tokenizer)
    if not source:
        return frozenset()
    return _variables_of(source)


@lru_cache(maxsize=8)
def _variables_of(source: str) -> frozenset[str] | None:
    import jinja2
    from jinja2 import meta

    env = jinja2.Environment(extensions=["jinja2.ext.loopcontrols", "jinja2.ext.do"])
    try:
        return frozenset(meta.find_undeclared_variables(env.parse(source)))
    except jinja2.TemplateError:
        return None
