"""The field table's rows of /v1/responses (OpenAI's Responses API) that chat does not share;
`fields.py` adds the fields both endpoints take (sampling, `stream`, vLLM's extras) to this
endpoint, and `responses_input.py` turns a checked body into a chat request."""

from __future__ import annotations

from roseinfer.server.field_checks import (
    FieldSpec,
    anything,
    equals,
    is_str,
    never,
    nulls_only,
)
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

RESPONSES = "responses"
_R = (RESPONSES,)

RESPONSES_FIELDS: tuple[FieldSpec, ...] = (
    # -- honoured
    _h("input", _R, "a string (one user message) or a list of items: messages, `function_call` "
       "and `function_call_output` items (an earlier answer's calls and their results, as "
       "the Agents SDK sends them); rendered with the chat template as chat's `messages`"),
    _h("instructions", _R, "a system message before the input (echoed in the response)"),
    _h("max_output_tokens", _R, "most tokens to generate, >= 1 (default: what the context "
       "leaves, at most the model's `max_new_tokens`); a response cut by it has status "
       "`incomplete`, `incomplete_details.reason` `max_output_tokens`"),
    _h("metadata", _R, "up to 16 strings (keys up to 64 characters, values up to 512), echoed "
       "in the response"),
    _h("truncation", _R, "`disabled` (default: a conversation past the context is a 400, "
       "`context_length_exceeded`) or `auto`: the oldest messages after the leading system "
       "ones are dropped, what is kept starting at a user message, until the prompt leaves "
       "room for `max_output_tokens` (left out: the model's `max_new_tokens`, at most half "
       "the context, else a quarter of it), as OpenAI's; the newest user message stays"),
    _h("user", _R, "an end-user id for the caller's own records, echoed in the response"),
    _h("prompt_cache_key", _R, "a string echoed in the response (prefix caching here is "
       "automatic and exact: no key changes what is cached or the text)"),
    _h("prompt_cache_retention", _R, "`in_memory` or `24h`, echoed in the response (how long "
       "OpenAI keeps a cached prefix; cached or not, the text is the same)"),
    _h("safety_identifier", _R, "an end-user id for the caller's own records, echoed in the "
       "response"),
    _h("text", _R, "see `text.format`"),
    _h("text.format", _R, "`{\"type\": \"text\"}` (default), `{\"type\": \"json_object\"}` or "
       "`{\"type\": \"json_schema\", \"name\", \"schema\", \"strict\", \"description\"}`: the "
       "output text held to the schema, as chat's `response_format`"),
    _h("text.format.type", _R, "`text`, `json_object` or `json_schema`"),
    _h("text.format.name", _R, "the schema's name (1-64 of `A-Za-z0-9_-`)"),
    _h("text.format.schema", _R, "the JSON schema the output text is held to"),
    _h("text.format.strict", _R, "true: the schema must be one OpenAI's strict mode takes "
       "(a 400 naming what it lacks); the output is held to the schema either way"),
    _h("text.format.description", _R, "what the format is for, echoed in the response's "
       "`text.format`; not shown to the model, as vLLM's and chat's `response_format` "
       "description (OpenAI's model reads it; here the schema alone holds the output)"),
    _h("tools", _R, "function tools (`type: \"function\"`, `name`, `description`, "
       "`parameters`, `strict`; other tool types are refused), as chat's `tools`: calls come "
       "back as `function_call` output items"),
    _h("tools[].type", _R, "`function`; built-in tools (web search, file search, computer, "
       "MCP, ...) are refused"),
    _h("tools[].name", _R, "the function's name"),
    _h("tools[].description", _R, "what the function does, shown to the model"),
    _h("tools[].parameters", _R, "a JSON schema of an object: every call's arguments are held "
       "to it"),
    _h("tools[].strict", _R, "true (the default here, as OpenAI's Responses API): the schema "
       "must be one OpenAI's strict mode takes (a 400 naming what it lacks); false: any object "
       "schema, calls still held to it"),
    _h("tool_choice", _R, "`auto` (default with tools), `none`, `required` or `{\"type\": "
       "\"function\", \"name\": ...}` (exactly that call), as chat's"),
    _h("tool_choice.type", _R, "`function`; other types (allowed tools, built-in tools) are "
       "refused"),
    _h("tool_choice.name", _R, "the function that must be called"),
    _h("store", _R, "keep the response (default true, as OpenAI): `GET /v1/responses/{id}` "
       "returns it, `DELETE` removes it, `previous_response_id` continues it; in memory, the "
       "least recently used dropped past `--responses-store-size` / `--responses-store-mib` "
       "(size 0: none kept, and `store: true` is refused); a `request_id` naming a stored or "
       "running response is a 400"),
    _h("previous_response_id", _R, "continue a stored response: its conversation (its input and "
       "its answer, and those it continued; not its `instructions`, as OpenAI) comes before "
       "`input`; a response not stored (`store: false`, deleted, dropped for room) is a 400 "
       "naming this field"),
    _h("background", _R, "true: run apart from the request (it needs `store`): answered at "
       "once `queued` (streamed: its events), then `GET /v1/responses/{id}` shows it "
       "`in_progress` with what it has written, `?stream=true&starting_after=N` streams its "
       "events again (a streamed one's), `POST /v1/responses/{id}/cancel` stops it "
       "(`cancelled`); a client that leaves does not stop it"),
    _h("conversation", _R, "a Conversation's id (or `{\"id\": ...}`; `POST /v1/conversations`): "
       "its items come before `input`, and once this response has completed (or was cut by its "
       "limit) its input and output items are added to it; not beside `previous_response_id`"),
    _h("include", _R, "`[\"message.output_text.logprobs\"]`: each output token's logprob (and "
       "`top_logprobs` likeliest) in `output_text.logprobs` (refused beside tools that may be "
       "called: a `function_call` item has no logprobs); other values ask for what is not "
       "here (reasoning, built-in tools, images) and are refused"),
    _h("top_logprobs", _R, "0 to 20 likeliest tokens at each position (above 0 it needs "
       "`include: [\"message.output_text.logprobs\"]`)"),
    _h("input[].type", _R, "`message` (the default where `role` is given), `function_call`, "
       "`function_call_output` or `reasoning` (an earlier answer's thinking: its `content`'s "
       "`reasoning_text` parts go to the chat template with the answer after it, as chat's "
       "`messages[].reasoning`); other items (item references, built-in tool calls) are "
       "refused"),
    _h("input[].role", _R, "a message's role: `user`, `assistant`, `system` or `developer` "
       "(as `system`)"),
    _h("input[].content", _R, "a message's text, or a list of `input_text` parts (an "
       "assistant's: `output_text` parts), joined with newlines"),
    _h("input[].content[].type", _R, "`input_text`, or `output_text` in an assistant "
       "message, `reasoning_text` in a reasoning item; images, files, audio and refusals are "
       "refused"),
    _h("input[].content[].text", _R, "the part's text"),
    _h("input[].call_id", _R, "a `function_call`'s id, which its `function_call_output` names"),
    _h("input[].name", _R, "a `function_call`'s function"),
    _h("input[].arguments", _R, "a `function_call`'s arguments, as JSON text"),
    _h("input[].output", _R, "a `function_call_output`'s result, as text"),
    # -- no-ops
    _noop("input[].id", _R, is_str, "an earlier output item's id: the model sees no ids"),
    _noop("input[].status", _R, equals("in_progress", "completed", "incomplete"), "an earlier "
          "output item's status: the model sees its text, not its status"),
    _noop("input[].content[].logprobs", _R, anything, "an earlier answer's logprobs, sent "
          "back with it: the model sees the text"),
    _noop("input[].summary", _R, anything, "a reasoning item's summary: the model is shown the "
          "thinking itself (`content`), not a summary of it"),
    # -- refused
    _ref("prompt", _R, never, "null", "stored prompt templates"),
    _ref("reasoning", _R, nulls_only, "{} (or each key null)", "reasoning models' effort and "
         "summaries"),
    _ref("max_tool_calls", _R, never, "null", "a cap on built-in tool calls"),
    _ref("context_management", _R, never, "null", "compaction of the conversation"),
    _ref("moderation", _R, never, "null", "moderation of the input and output"),
    _ref("prompt_cache_options", _R, never, "null", "explicit cache breakpoints and their "
         "lifetime, and cache diagnostics (prefix caching here is automatic and exact)"),
    _ref("text.verbosity", _R, equals("medium"), "\"medium\" (OpenAI's default)",
         "reasoning models' answer length"),
    _ref("input[].content[].annotations", _R, equals([]), "[]", "citations in the history"),
    _ref("input[].encrypted_content", _R, never, "null", "OpenAI's encrypted thinking, which "
         "only OpenAI can read"),
    _ref("input[].phase", _R, never, "null", "commentary / final-answer labels of earlier "
         "assistant messages, which the chat template cannot show"),
    _ref("enable_response_messages", _R, equals(False), "false", "the prompt's and the "
         "answer's chat messages in the response", "vLLM"),
    _ref("previous_input_messages", _R, never, "null", "an earlier turn's messages in "
         "harmony's format (send them in `input`)", "vLLM"),
)  # fmt: skip

# chat's fields /v1/responses reads as chat does (`fields.py` adds it to their rows)
SHARED_WITH_RESPONSES = frozenset({
    "model", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids",
    "ignore_eos", "min_tokens", "presence_penalty", "frequency_penalty", "repetition_penalty",
    "logit_bias", "structured_outputs", "stream", "stream_options", "stream_interval",
    "stream_options.include_obfuscation", "request_id", "chat_template_kwargs", "include_reasoning",
    "parallel_tool_calls", "service_tier", "cache_salt", "include_stop_str_in_output",
    "skip_special_tokens", "priority", "mm_processor_kwargs", "media_io_kwargs",
    "kv_transfer_params", "vllm_xargs", "mm_payload",
})  # fmt: skip


def shared_with_responses(spec: FieldSpec) -> bool:
    return spec.name in SHARED_WITH_RESPONSES or spec.name.startswith("structured_outputs.")
