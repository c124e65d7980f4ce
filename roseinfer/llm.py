"""The offline front door: `LLM(model=...).generate(prompts, SamplingParams(...))`.

One `LLMEngine` (continuous batching underneath) and the one `OutputProcessor`; the seeds'
classes (`roseinfer.compat`) and the CLI are built on this.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterator
from collections.abc import Sequence as Seq
from typing import Any, cast

from roseinfer.chat import (
    ChatMessage,
    NamedToolChoice,
    ToolDefinition,
    chat_prompt_ids,
    chat_prompt_text,
    read_tools,
)
from roseinfer.checks import check_bools, is_int
from roseinfer.config import EngineConfig
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.engine.requests import InvalidRequestError, refuse_unread
from roseinfer.loader import LoadedModel, load_model
from roseinfer.output.processor import OutputProcessor
from roseinfer.outputs import (
    EmbeddingOutput,
    EmbeddingRequestOutput,
    RequestFailed,
    RequestOutput,
)
from roseinfer.pooling_params import PoolingParams
from roseinfer.progress import progress
from roseinfer.sampling_params import SamplingParams
from roseinfer.structured.params import StructuredOutputs
from roseinfer.structured.tools import ToolUse
from roseinfer.tokenizer import Tokenizer

# a text, its token ids, or vLLM's prompt dicts ({"prompt": text} or {"prompt_token_ids": ids})
Prompt = str | Seq[int] | dict[str, Any]
_PROMPT_KEYS = ("prompt", "prompt_token_ids")


def encode_prompt(
    tokenizer: Tokenizer, prompt: str, name: str = "prompt", add_special_tokens: bool = True
) -> list[int]:
    """A text prompt's token ids (the tokenizer's special tokens, a BOS, added unless
    `add_special_tokens` is false); empty text (or text that encodes to nothing) is refused,
    the message calling it `name`."""
    if not isinstance(prompt, str) or not prompt:
        raise InvalidRequestError(f"{name} must be a non-empty string")
    ids = tokenizer.encode(prompt, add_special_tokens)
    if not ids:
        raise InvalidRequestError(f"{name} encodes to no tokens")
    return ids


def _prompt_text(prompt: Prompt) -> str | None:
    """A prompt's text as given (vLLM's `RequestOutput.prompt`), None for token ids."""
    if isinstance(prompt, dict):
        prompt = prompt.get("prompt", ())
    return prompt if isinstance(prompt, str) else None


def _per_prompt(
    sampling_params: SamplingParams | Seq[SamplingParams], count: int
) -> list[SamplingParams]:
    """One SamplingParams per prompt: one for all, or one each."""
    if isinstance(sampling_params, SamplingParams):
        return [sampling_params] * count
    if not all(isinstance(p, SamplingParams) for p in sampling_params):  # a dict's keys, say
        raise TypeError(
            "sampling_params must be a SamplingParams, a list of them (one per prompt) or None"
        )
    if len(sampling_params) != count:
        raise ValueError(f"{len(sampling_params)} sampling params for {count} prompts")
    return list(sampling_params)


def _with_tools(params: SamplingParams, use: ToolUse) -> SamplingParams:
    """`params` under the tools' grammar."""
    if params.structured_outputs is not None:
        raise ValueError("structured_outputs and tools both constrain the output: give one")
    return dataclasses.replace(params, structured_outputs=StructuredOutputs(grammar=use.grammar()))


class LLM:
    """A model plus a batched engine for offline generation."""

    def __init__(
        self, model: str | None = None, *, loaded: LoadedModel | None = None, **config: object
    ) -> None:
        """`config`: `EngineConfig` fields (`dtype`, `max_num_seqs`, ...). `loaded`: reuse a
        loaded model (its weights are shared, the engine and its KV cache are new); its
        load-time fields (`LOAD_FIELDS`: model, dtype, ...) are the model's, and giving one
        that differs is a ValueError. `self.config` is what runs (`max_model_len` resolved)."""
        cfg = EngineConfig(model=model, **config)  # type: ignore[arg-type]
        if loaded is not None:
            cfg = loaded.engine_config(cfg, {*config, *(["model"] if model is not None else [])})
        self.loaded = loaded or load_model(cfg)
        self.tokenizer = self.loaded.tokenizer
        self.engine = LLMEngine(self.loaded, cfg)
        self.config = self.engine.config
        self.processor = OutputProcessor(self.engine)
        self._ids = itertools.count()

    @functools.cached_property
    def default_params(self) -> SamplingParams:
        """The params of a call without `sampling_params`: the model's generation_config.json
        defaults (vLLM's `get_default_sampling_params`) unless `generation_config="none"`. Read
        on the first such call, so callers that always give params never read the file."""
        return self.engine.sampling_defaults.params()

    def get_tokenizer(self) -> Any:
        """The Hugging Face tokenizer (vLLM's `LLM.get_tokenizer`; `tokenizer` is this
        engine's wrapper of it)."""
        return self.tokenizer.hf

    def get_default_sampling_params(self) -> SamplingParams:
        """vLLM's name of `default_params`."""
        return self.default_params

    def encode(self, prompt: Prompt) -> list[int]:
        """One prompt's token ids: a text, token ids, or vLLM's `{"prompt": text}` or
        `{"prompt_token_ids": ids}` (another key is a ValueError naming it). Not vLLM's
        `LLM.encode`, which pools: that is `embed` here."""
        value: Any = prompt
        if isinstance(prompt, dict):
            unknown = sorted(set(prompt) - set(_PROMPT_KEYS))
            given = [k for k in _PROMPT_KEYS if k in prompt]
            if unknown or len(given) != 1:
                raise InvalidRequestError(
                    f"a prompt dict holds one of {' or '.join(_PROMPT_KEYS)}, got "
                    f"{sorted(prompt)} (multi-modal data and other keys are not supported)",
                    unknown[0] if unknown else "prompt",
                )
            value = prompt[given[0]]
        if isinstance(value, str):
            return encode_prompt(self.tokenizer, value)
        if (isinstance(value, bytes | bytearray | dict) or not hasattr(value, "__iter__")
                or not all(isinstance(t, int) and not isinstance(t, bool) for t in value)):  # fmt: skip
            raise TypeError("a prompt is a string or token ids (integers), not "
                            f"{type(value).__name__} of other items (LLM.embed pools, as "
                            "vLLM's LLM.encode)")  # fmt: skip
        return list(value)

    def encode_chat(self, messages: Seq[dict]) -> list[int]:
        """The conversation's prompt ids, checked and rendered as `chat` renders them (an
        unknown message key or a name the template drops is a ValueError naming it)."""
        return chat_prompt_ids(self.tokenizer, [ChatMessage.model_validate(m) for m in messages])

    def generate(
        self,
        prompts: Prompt | Seq[Prompt],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """Outputs in the order of `prompts` (strings, token ids, or vLLM's prompt dicts);
        each output's `prompt` is its text prompt (None for token ids)."""
        check_bools(use_tqdm=use_tqdm)
        batch = self._batch(prompts)
        outputs = self._run([self.encode(p) for p in batch], sampling_params, use_tqdm)
        return [dataclasses.replace(out, prompt=_prompt_text(p))
                for out, p in zip(outputs, batch, strict=True)]  # fmt: skip

    def embed(
        self,
        prompts: Prompt | Seq[Prompt],
        pooling_params: PoolingParams | Seq[PoolingParams] | None = None,
        use_tqdm: bool = True,
        truncate_prompt_tokens: int | None = None,
    ) -> list[EmbeddingRequestOutput]:
        """vLLM's `LLM.embed`: each prompt's embedding (`.outputs.embedding`), in the order of
        `prompts` (strings, or lists of token ids): the final hidden state at its last token,
        L2-normalized (`PoolingParams`: one for all, or one per prompt). `truncate_prompt_tokens`:
        keep each prompt's last k tokens (-1: the context's worth). Batched with each other as generation requests are;
        the first request the engine fails raises RequestFailed, and the others are aborted."""
        check_bools(use_tqdm=use_tqdm)
        ids = self._encode_all(prompts)
        if truncate_prompt_tokens is not None:
            k = truncate_prompt_tokens
            if not is_int(k) or not (k >= 1 or k == -1):
                raise ValueError(f"truncate_prompt_tokens must be >= 1 or -1, got {k!r}")
            k = self.engine.max_model_len if k == -1 else k
            ids = [p[-k:] for p in ids]
        if pooling_params is None or isinstance(pooling_params, PoolingParams):
            pooling = [pooling_params or PoolingParams()] * len(ids)
        elif len(pooling_params) != len(ids):
            raise ValueError(f"{len(pooling_params)} pooling params for {len(ids)} prompts")
        else:
            pooling = list(pooling_params)
        for p in ids:  # every request checked before any is queued
            self.engine.validate_pooling(p)
        rids: list[str] = []
        bar = progress(len(ids), "Embedding", "req", disable=not use_tqdm)
        pooled = self.processor.pooled
        try:
            for p, params in zip(ids, pooling, strict=True):
                rids.append(str(next(self._ids)))
                self.processor.add_pooling_request(rids[-1], p, params)
            left = set(rids)
            while left and self.engine.has_unfinished():
                self.processor.step()
                for rid in [r for r in left if pooled[r] is not None]:
                    left.discard(rid)
                    bar.update(1)
                    if (out := pooled[rid]) is not None and out.embedding is None:
                        raise RequestFailed(out.error or "the engine failed this request",
                                            out.invalid_request)  # fmt: skip
            if left:
                raise RequestFailed("aborted")
            outputs = []
            for rid, p in zip(rids, ids, strict=True):
                out = pooled[rid]
                assert out is not None and out.embedding is not None  # (else raised above)
                vector = EmbeddingOutput(out.embedding.tolist())
                outputs.append(EmbeddingRequestOutput(rid, p, vector, out.num_cached_tokens))
            return outputs
        finally:
            bar.close()
            for rid in rids:
                self.processor.abort(rid)

    def _encode_all(self, prompts: Prompt | Seq[Prompt]) -> list[list[int]]:
        """One prompt or a list of them (`_batch`), as token-id lists."""
        return [self.encode(p) for p in self._batch(prompts)]

    @staticmethod
    def _batch(prompts: Prompt | Seq[Prompt]) -> list[Prompt]:
        """One prompt (a string, token ids or a prompt dict) or a list of them, as a list."""
        if isinstance(prompts, bytes | bytearray):  # its items are ints: it would read as ids
            raise TypeError("prompts must be a string, token ids or a list of them, not bytes")
        if isinstance(prompts, str | dict) or (prompts and isinstance(prompts[0], int)):
            return [cast(Prompt, prompts)]
        return list(cast(Seq[Prompt], prompts))

    def chat(
        self,
        messages: Seq[dict] | Seq[Seq[dict]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
        *,
        tools: Seq[dict] | None = None,
        tool_choice: str | dict | None = None,
        parallel_tool_calls: bool = True,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> list[RequestOutput]:
        """One conversation (OpenAI's message dicts: role, content, and name, tool_calls,
        tool_call_id) or a list of them, through the chat template as the server renders them.

        `tools` (OpenAI's tool dicts), `tool_choice` ("auto" by default, "none", "required" or
        {"type": "function", "function": {"name": ...}}) and `parallel_tool_calls` act as on the
        chat endpoint: the model is shown the tools, its calls are held to their schemas by a
        grammar and come back in `CompletionOutput.tool_calls` (README, "Tool calling").
        ValueError (pydantic's, or `ChatError` naming the field) for what cannot act."""
        check_bools(use_tqdm=use_tqdm, parallel_tool_calls=parallel_tool_calls,
                    add_generation_prompt=add_generation_prompt,
                    continue_final_message=continue_final_message)  # fmt: skip
        conversations = [messages] if messages and isinstance(messages[0], dict) else messages
        definitions = None if tools is None else [ToolDefinition.model_validate(t) for t in tools]
        choice = (
            NamedToolChoice.model_validate(tool_choice)
            if isinstance(tool_choice, dict)
            else tool_choice
        )
        shown, use = read_tools(definitions, choice, parallel_tool_calls)
        texts = []
        for i, conv in enumerate(conversations):
            try:
                texts.append(chat_prompt_text(
                    self.tokenizer,
                    [ChatMessage.model_validate(m) for m in conv],  # type: ignore[union-attr]
                    shown,
                    add_generation_prompt,
                    continue_final_message,
                    chat_template_kwargs,
                ))  # fmt: skip
            except ValueError as e:
                if conversations is messages:  # a list of them: say which one
                    raise ValueError(f"conversation {i}: {e}") from e
                raise
        # the template writes the special tokens, so none are added (as `chat_prompt_ids`)
        ids = [self.tokenizer.encode(text, False) for text in texts]
        params = self._params_for(ids, sampling_params)
        if use is not None:
            params = [_with_tools(p, use) for p in params]
        outputs = self._run(ids, params, use_tqdm, use)
        # each output's `prompt` is its rendered conversation, as vLLM's
        return [dataclasses.replace(out, prompt=text)
                for out, text in zip(outputs, texts, strict=True)]  # fmt: skip

    def stream(self, prompt_token_ids: Seq[int], params: SamplingParams) -> Iterator[str]:
        """The text of one request, piece by piece as it is generated. One choice, and text
        only: `params.n` above 1, `logprobs` or `prompt_logprobs` is a ValueError (`generate`
        returns n choices and their logprobs). A request the engine fails (finish reason
        "error" in `generate`) raises `RequestFailed` with the reason once its text so far has
        been yielded."""
        refuse_unread(params, "stream", ("n", "logprobs", "prompt_logprobs"))
        return self._stream(prompt_token_ids, params)

    def _stream(self, prompt_token_ids: Seq[int], params: SamplingParams) -> Iterator[str]:
        rid = self._add(prompt_token_ids, params)  # queued when read, so freed by its finally
        try:
            while self.engine.has_unfinished():
                for delta in self.processor.step():
                    if delta.state.request_id == rid and delta.index == 0 and delta.text:
                        yield delta.text
                if self.processor.states[rid].finished:
                    break
            choice = self.processor.states[rid].choices[0]
            if choice.finish_reason == "error":
                raise RequestFailed(choice.error or "the engine failed this request")
        finally:
            self.processor.abort(rid)

    def reset_prefix_cache(self) -> None:
        self.engine.block_manager.reset_prefix_cache()

    def _add(
        self,
        prompt_token_ids: Seq[int],
        params: SamplingParams,
        tool_use: ToolUse | None = None,
    ) -> str:
        rid = str(next(self._ids))
        self.processor.add_request(rid, prompt_token_ids, params, tool_use)
        return rid

    def _params_for(
        self,
        prompt_ids: list[list[int]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None,
    ) -> list[SamplingParams]:
        """Each prompt's params (those given, else the default: the model's `max_new_tokens`,
        else SamplingParams' 64) with `max_tokens` cut to the room the prompt leaves in the
        context: an output that reaches the context ends with "length", as in vLLM's offline
        engine (the server refuses such a request instead, as OpenAI's). A prompt that leaves
        no room is refused by `validate`."""
        if sampling_params is None:
            sampling_params = self.default_params
        out = []
        given = _per_prompt(sampling_params, len(prompt_ids))
        for ids, params in zip(prompt_ids, given, strict=True):
            room = self.engine.max_total_tokens - len(ids)
            if 1 <= room < params.max_tokens:
                # max_new_tokens (the seeds' alias, which replace would copy) left out
                params = dataclasses.replace(params, max_tokens=room, max_new_tokens=None,
                                             min_tokens=min(params.min_tokens, room))  # fmt: skip
            out.append(params)
        return out

    def _run(
        self,
        prompt_ids: list[list[int]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None,
        use_tqdm: bool,
        tool_use: ToolUse | None = None,
    ) -> list[RequestOutput]:
        params = self._params_for(prompt_ids, sampling_params)
        # Validate every request before queuing any, so a bad one leaves nothing behind.
        for ids, p in zip(prompt_ids, params, strict=True):
            self.engine.validate(ids, p)
        rids: list[str] = []
        bar = progress(len(prompt_ids), "Generating", "req", disable=not use_tqdm)
        try:
            # inside the try: a request that fails to queue (its grammar, its bad words) must
            # not leave the ones before it running
            for ids, p in zip(prompt_ids, params, strict=True):
                rids.append(self._add(ids, p, tool_use))
            while self.engine.has_unfinished():
                for delta in self.processor.step():
                    if delta.finished and delta.state.finished:
                        bar.update(1)
            return [self.processor.states[rid].output() for rid in rids]
        finally:
            bar.close()
            for rid in rids:  # a KeyboardInterrupt must not leave blocks held
                self.processor.abort(rid)
