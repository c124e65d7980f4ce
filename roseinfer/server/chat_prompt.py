"""A chat request's prompt: its messages through the model's chat template.

The fields that act through the template (`add_generation_prompt`, `continue_final_message`,
`chat_template_kwargs`, `messages[].name`) are honoured by handing them to it, and refused with
a 400 naming them where the template would drop them: a name the template never renders, or a
`chat_template_kwargs` key it never reads, would otherwise be accepted and ignored.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from roseinfer.server import protocol as P
from roseinfer.server.fields import FieldError
from roseinfer.tokenizer import Tokenizer, TokenizerError

# Arguments of transformers' apply_chat_template, and the request's own fields: not template
# variables a client may set through chat_template_kwargs.
_RESERVED = frozenset({
    "messages", "conversation", "add_generation_prompt", "continue_final_message", "tools",
    "documents", "chat_template", "tokenize", "padding", "truncation", "max_length",
    "return_tensors", "return_dict", "return_assistant_tokens_mask", "tokenizer_kwargs",
})  # fmt: skip


def template_messages(messages: list[P.ChatMessage]) -> list[dict[str, str]]:
    """The messages as templates take them: {role, content[, name]}, string content."""
    out = []
    for i, m in enumerate(messages):
        if m.role not in P.CHAT_ROLES:
            raise FieldError(
                f"messages.{i}.role",
                f"messages[{i}].role {m.role!r} is not one of {', '.join(P.CHAT_ROLES)}",
                "invalid_value",
            )
        if isinstance(m.content, list):
            content = "\n".join(p.text for p in m.content)
        else:
            content = m.content or ""
        message = {"role": "system" if m.role == "developer" else m.role, "content": content}
        if m.name:  # "" names nobody: the same as no name
            message["name"] = m.name
        out.append(message)
    return out


def chat_prompt_ids(tokenizer: Tokenizer, body: P.ChatCompletionRequest) -> list[int]:
    """Token ids of the request's prompt; FieldError (a 400 naming the field) for a template
    field that cannot act, TokenizerError when the template refuses the messages."""
    if body.continue_final_message and body.add_generation_prompt:
        raise FieldError(
            "continue_final_message",
            "continue_final_message needs add_generation_prompt: false (one continues the last "
            "message, the other opens a new turn)",
            "invalid_value",
        )
    messages = template_messages(body.messages)
    kwargs = _template_kwargs(tokenizer, messages, body.chat_template_kwargs or {})

    def render(msgs: list[dict]) -> str:
        return tokenizer.apply_chat_template(
            msgs, body.add_generation_prompt, body.continue_final_message, **kwargs
        )

    text = render(messages)
    named = [i for i, m in enumerate(messages) if "name" in m]
    if named:
        unnamed = [{k: v for k, v in m.items() if k != "name"} for m in messages]
        if render(unnamed) == text:
            raise FieldError(
                f"messages.{named[0]}.name",
                "this model's chat template does not use message names, so the model would "
                "never see it: leave 'name' out",
            )
    return tokenizer.encode(text, False)


def _template_kwargs(tokenizer: Tokenizer, messages: list[dict], kwargs: dict) -> dict[str, Any]:
    variables = template_variables(tokenizer)
    for key in kwargs:
        param = f"chat_template_kwargs.{key}"
        if key in _RESERVED:
            raise FieldError(param, f"'{key}' cannot be set through chat_template_kwargs")
        if variables is None:  # a template we cannot parse: see whether the key changes it
            if _renders_same(tokenizer, messages, {key: kwargs[key]}):
                variables = frozenset()
            else:
                continue
        if key not in variables:
            raise FieldError(
                param, f"this model's chat template does not read a variable named '{key}'"
            )
    return kwargs


def _renders_same(tokenizer: Tokenizer, messages: list[dict], kwargs: dict) -> bool:
    try:
        return tokenizer.apply_chat_template(messages, **kwargs) == (
            tokenizer.apply_chat_template(messages)
        )
    except TokenizerError:
        return False  # the template used it (and refused the value): the render will say so


def template_variables(tokenizer: Tokenizer) -> frozenset[str] | None:
    """The variables the chat template reads; empty without a template, None if unparsable."""
    source = getattr(tokenizer.hf, "chat_template", None)
    if isinstance(source, dict):
        source = source.get("default")
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
