"""What a model's chat template reads: the variables it names (Jinja's undeclared ones), so that
a request's `chat_template_kwargs` naming one it never reads is refused rather than ignored, and
`reasoning_effort` reaches the variables that read it (`effort_kwargs`)."""

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


class ChatError(ValueError):
    """A message, tool or template variable that cannot act: `param` names it (a 400 from the
    server)."""

    def __init__(self, param: str | None, message: str, code: str = "unsupported_field") -> None:
        super().__init__(message)
        self.param, self.code = param, code


# Arguments of transformers' apply_chat_template, and the request's own fields: not template
# variables a client may set through chat_template_kwargs.
_RESERVED = frozenset({
    "messages", "conversation", "add_generation_prompt", "continue_final_message", "tools",
    "documents", "chat_template", "tokenize", "padding", "truncation", "max_length",
    "return_tensors", "return_dict", "return_assistant_tokens_mask", "tokenizer_kwargs",
})  # fmt: skip


def effort_kwargs(
    tokenizer: Tokenizer, messages: list[dict], kwargs: dict[str, Any], effort: str
) -> dict[str, Any]:
    """vLLM's reading of `reasoning_effort`: the template's `reasoning_effort` variable, and
    `enable_thinking` (off for "none"; the request's `chat_template_kwargs` win), where the
    template reads them. A template that reads neither has no effort to set: a 400 but for
    "none", which asks for no reasoning from a model that does none."""
    out: dict[str, Any] = {}
    if reads_variable(tokenizer, messages, "reasoning_effort", effort):
        out["reasoning_effort"] = effort
    thinking = effort != "none"
    if "enable_thinking" not in kwargs and reads_variable(
        tokenizer, messages, "enable_thinking", thinking
    ):
        out["enable_thinking"] = thinking
    if not out and effort != "none":
        raise ChatError("reasoning_effort", "this model's chat template reads no reasoning "
                        "effort (neither `reasoning_effort` nor `enable_thinking`): it has none "
                        'to set; leave it out or send "none"')  # fmt: skip
    return out


def checked_template_kwargs(
    tokenizer: Tokenizer, messages: list[dict], kwargs: dict
) -> dict[str, Any]:
    """A request's `chat_template_kwargs`, each a variable the template reads (ChatError naming
    the first that is not, or that names an argument of the render itself)."""
    for key in kwargs:
        param = f"chat_template_kwargs.{key}"
        if key in _RESERVED:
            raise ChatError(param, f"'{key}' cannot be set through chat_template_kwargs")
        if not reads_variable(tokenizer, messages, key, kwargs[key]):
            raise ChatError(
                param, f"this model's chat template does not read a variable named '{key}'"
            )
    return kwargs
