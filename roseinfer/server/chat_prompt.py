"""A chat body's prompt, through the one renderer (`roseinfer.chat`), its errors as 400s: the
field that cannot act named in `param`, a template's refusal of the messages under `messages`."""

from __future__ import annotations

from typing import Any

from roseinfer.chat import ChatError, ChatMessage, chat_prompt_ids
from roseinfer.server.errors import APIError
from roseinfer.structured.tools import Tool
from roseinfer.tokenizer import Tokenizer, TokenizerError


def request_prompt_ids(
    tokenizer: Tokenizer,
    messages: list[ChatMessage],
    tools: tuple[Tool, ...],
    add_generation_prompt: bool,
    continue_final_message: bool,
    template_kwargs: dict[str, Any] | None,
) -> list[int]:
    try:
        return chat_prompt_ids(tokenizer, messages, tools, add_generation_prompt,
                               continue_final_message, template_kwargs)  # fmt: skip
    except ChatError as e:
        raise APIError(400, str(e), param=e.param, code=e.code) from None
    except TokenizerError as e:
        raise APIError(400, str(e), param="messages") from None
