"""Other servers' names in a /completion body. SillyTavern's "llama.cpp" text-completion type
forwards its whole generation object, so beside llama.cpp's own fields come those of
text-generation-webui (ooba), KoboldCpp, TGI and Ollama, each with the value of its llama.cpp
twin (llama.cpp itself ignores keys it does not know). Each such name is read as its twin and
must agree with it where both are given (`fold_aliases`); ooba's prompt truncation and token
bans act as there (`truncated`, `token_bans`). The samplers only those servers have are in the
field table, refused unless neutral (llamacpp_fields.py).
"""

from __future__ import annotations

from typing import Any

from roseinfer.server.errors import APIError

# another server's name -> llama.cpp's (or roseinfer's /completion field) it means
ALIASES = {
    "max_new_tokens": "n_predict",  # ooba's, TGI's
    "num_predict": "n_predict",  # Ollama's
    "stopping_strings": "stop",  # ooba's
    "repetition_penalty": "repeat_penalty",  # ooba's, HF's (on /completion: llama.cpp's window)
    "rep_pen": "repeat_penalty",  # KoboldCpp's
    "rep_pen_range": "repeat_last_n",  # KoboldCpp's (read as llama.cpp's: 0, the penalties off)
    "repetition_penalty_range": "repeat_last_n",  # ooba's
    "ban_eos_token": "ignore_eos",  # ooba's
    "sampler_seed": "seed",  # KoboldCpp's
    "num_ctx": "truncation_length",  # Ollama's context window, ooba's name below
}


def fold_aliases(body: dict[str, Any]) -> None:
    """Each alias in `body` (checked: its values have the table's types) replaced by its twin,
    in place; an alias that disagrees with its twin (or with another alias of it) is a 400
    naming it."""
    for alias, name in ALIASES.items():
        if alias not in body:
            continue
        value = body.pop(alias)
        if name in body and body[name] != value:
            raise APIError(400, f"{alias} ({value!r}) is {name} ({body[name]!r}) under another "
                           "server's name: they differ, give one", param=alias)  # fmt: skip
        body[name] = value


def truncated(
    prompts: list[list[int]], truncation_length: int | None, max_new_tokens: int
) -> list[list[int]]:
    """ooba's `truncation_length`: a prompt longer than it less the output asked for keeps
    its last tokens (a prompt that fits is untouched)."""
    if truncation_length is None:
        return prompts
    keep = truncation_length - max(max_new_tokens, 0)
    if keep < 1:
        raise APIError(400, f"truncation_length ({truncation_length}) leaves no room for a "
                       f"prompt beside {max_new_tokens} tokens to generate",
                       param="truncation_length")  # fmt: skip
    return [ids[-keep:] for ids in prompts]


def token_bans(text: str) -> list[int]:
    """ooba's `custom_token_bans`: token ids separated by commas ("" none)."""
    ids = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            ids.append(int(part))
        except ValueError:
            raise APIError(400, f"custom_token_bans holds token ids separated by commas, got "
                           f"{part.strip()!r}", param="custom_token_bans") from None  # fmt: skip
        if ids[-1] < 0:
            raise APIError(400, f"custom_token_bans: {ids[-1]} is not a token id",
                           param="custom_token_bans")  # fmt: skip
    return ids
