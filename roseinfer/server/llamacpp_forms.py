"""The forms a /completion body takes that /v1/completions' does not: llama.cpp's `logit_bias`
(`native_logit_bias`), and other servers' names. SillyTavern's "llama.cpp" text-completion type
forwards its whole generation object, so beside llama.cpp's own fields come those of
text-generation-webui (ooba), KoboldCpp, TGI and Ollama, each with the value of its llama.cpp
twin (llama.cpp itself ignores keys it does not know). Each such name is read as its twin and
must agree with it where both are given (`fold_aliases`); ooba's prompt truncation and token
bans act as there (`truncated`, `token_bans`). The samplers only those servers have are in the
field table, refused unless neutral (llamacpp_fields.py).
"""

from __future__ import annotations

import re
from typing import Any

from roseinfer.checks import is_number
from roseinfer.sampling_params import MAX_LOGIT_BIAS
from roseinfer.server.errors import APIError
from roseinfer.tokenizer import Tokenizer

# an object key llama.cpp reads as a token id (strtol: ASCII spaces and digits only)
_ID_KEY = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")

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


def native_logit_bias(
    tokenizer: Tokenizer, bias: Any, token_bans_text: str = ""
) -> dict[str, float] | None:
    """llama.cpp's `logit_bias` forms as /v1's `{token id: bias}`: `[[token, bias], ...]`, a
    token an id or a string (each of its tokens); or an object, a key that reads as an
    integer an id, another a string. A bias is a number or `false` (-100, OpenAI's floor:
    llama.cpp's -inf could leave a row no token); `true` asks for nothing, as llama.cpp's.
    ooba's `custom_token_bans` (`token_bans_text`) adds each of its tokens as `false`."""
    out = _bias_pairs(tokenizer, bias)
    for token in token_bans(token_bans_text):
        if out.setdefault(str(token), -MAX_LOGIT_BIAS) != -MAX_LOGIT_BIAS:
            raise APIError(400, f"custom_token_bans bans token {token}, which logit_bias gives "
                           "another bias", param="custom_token_bans")  # fmt: skip
    return out or None


def _bias_pairs(tokenizer: Tokenizer, bias: Any) -> dict[str, float]:
    if bias is None:
        return {}
    pairs = list(bias.items()) if isinstance(bias, dict) else bias
    out: dict[str, float] = {}
    for i, pair in enumerate(pairs):
        where = f"logit_bias[{i}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise APIError(400, f"{where} must be a [token, bias] pair", param="logit_bias")
        token, value = pair
        if value is True:
            continue
        if value is False:
            value = -MAX_LOGIT_BIAS
        if not is_number(value):
            raise APIError(400, f"{where}: a bias is a number or false, got {value!r}",
                           param="logit_bias")  # fmt: skip
        if isinstance(bias, dict) and _ID_KEY.fullmatch(token):
            ids = [int(token)]
        elif isinstance(token, str):  # text, special tokens' too (llama.cpp's parse_special off)
            ids = tokenizer.encode(token, False, split_special_tokens=True)
            if not ids:
                raise APIError(400, f"{where}: {token!r} has no tokens", param="logit_bias")
        elif isinstance(token, int) and not isinstance(token, bool):
            ids = [token]
        else:
            raise APIError(400, f"{where}: a token is an id or a string", param="logit_bias")
        for tid in ids:
            if tid < 0:
                raise APIError(400, f"{where}: {tid} is not a token id", param="logit_bias")
            if str(tid) in out and out[str(tid)] != value:
                raise APIError(400, f"{where} gives token {tid} a second bias",
                               param="logit_bias")  # fmt: skip
            out[str(tid)] = value
    return out
