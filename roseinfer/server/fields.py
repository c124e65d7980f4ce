"""The field table: every request field of /v1/chat/completions, /v1/completions,
/v1/responses (its own rows: `responses_fields.py`), /v1/embeddings (`embeddings_fields.py`),
llama.cpp's /completion and /embedding (`llamacpp_fields.py`), vLLM's /score and /rerank
(`scores_fields.py`) and /generate that OpenAI, vLLM or llama.cpp's server takes, and what
roseinfer does with it.

Nothing is accepted and ignored. Each field of each endpoint is exactly one of:

- honoured: implemented, and tested by its effect (the pydantic models of `protocol.py` hold
  exactly these fields; /v1/responses' own are read into chat's by `responses_input.py`);
- no-op: accepted (its type checked) because no value of it can change the output, e.g. `user`,
  or a knob of a feature that is refused unless off (`mirostat_tau` without `mirostat`);
- refused: a 400 naming the field (`param`), unless it holds its neutral value, the one that
  asks for nothing (`min_p: 0`, `logprobs: false`): that value is a documented no-op.

A field nobody knows is refused with a 400 naming it, as OpenAI does. `null` is the field left
out, except for unknown fields, which are refused whatever their value.

`body_check.check_body` applies the table to a parsed JSON body before pydantic sees it;
README.md's "API fields" section is generated from it (`field_docs.py`; tests/test_fields.py
keeps the two in step).
"""

from __future__ import annotations

from roseinfer.server.embeddings_fields import EMBEDDINGS, EMBEDDINGS_FIELDS
from roseinfer.server.field_checks import (
    FieldSpec,
    Kind,
    anything,
    at_most_zero,
    best_of,
    equals,
    function_call_neutral,
    is_bool,
    is_int,
    is_num,
    is_str,
    metadata,
    negative,
    never,
    shared_with,
    tool_choice_none,
)
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref
from roseinfer.server.llamacpp_fields import (
    LLAMACPP_COMPLETION,
    LLAMACPP_EMBEDDING,
    LLAMACPP_FIELDS,
    LLAMACPP_INFILL,
    shared_with_infill,
    shared_with_llamacpp,
)
from roseinfer.server.responses_fields import RESPONSES, RESPONSES_FIELDS, shared_with_responses
from roseinfer.server.scores_fields import RERANK, SCORE, SCORES_FIELDS

CHAT, COMPLETIONS, GENERATE = "chat", "completions", "generate"
ENDPOINTS = {
    CHAT: "/v1/chat/completions",
    COMPLETIONS: "/v1/completions",
    RESPONSES: "/v1/responses",
    EMBEDDINGS: "/v1/embeddings",
    GENERATE: "/generate",
    LLAMACPP_COMPLETION: "/completion",
    LLAMACPP_EMBEDDING: "/embedding",
    LLAMACPP_INFILL: "/infill",
    SCORE: "/score",
    RERANK: "/rerank",
}
_V1 = (CHAT, COMPLETIONS)


_C, _CO, _G = (CHAT,), (COMPLETIONS,), (GENERATE,)
_VL, _LC, _RI = "vLLM", "llama.cpp", "roseinfer"
_ONLY_WITH = "no value changes the output: only used with `{}`, which is refused unless off"

FIELDS: tuple[FieldSpec, ...] = (
    # -- honoured: /v1/*
    _h("model", _V1, "must name the served model (404 otherwise); may be left out (or `\"\"`, "
       "as vLLM takes it)"),
    _h("prompt", _CO, "a string, a list of strings, a token-id list or a list of those; "
       "prompts x `n` at most 2,048 choices per request (a 400 naming `prompt`)"),
    _h("messages", _C, "the conversation, rendered with the model's chat template"),
    _h("max_tokens", _V1, "most tokens to generate, >= 1, or -1 as llama.cpp reads it (its "
       "web page sends it): what the context leaves (completions: 16 by default, and 0 "
       "with `echo`; chat: what the context leaves; either way the default is at most the "
       "model's `max_new_tokens`, see `temperature`, and at most what the context leaves, as "
       "vLLM's; a value given is taken as it is, past the model's `max_new_tokens` too)"),
    _h("max_completion_tokens", _V1, "OpenAI's newer name for `max_tokens` (if both are given "
       "they must agree)"),
    _h("n_predict", _V1, "llama.cpp's name for `max_tokens` (-1: what the context leaves; on "
       "/completion 0: the prompt alone, computed into the prefix cache, nothing answered, a "
       "400 where the server keeps no cache)", _LC),
    _h("temperature", _V1, "default 1; 0 (or below 1e-5) is greedy; any value >= 0 (as "
       "llama.cpp; OpenAI and vLLM 0.32 refuse above 2); this and `top_p`, `top_k`, `min_p`, `repetition_penalty` and "
       "the output limit, left out, are the model's own where its generation_config.json (or a "
       "GGUF's `general.sampling.*`) sets them (vLLM's default; `--generation-config none`: "
       "OpenAI's); on /completion and /infill this, `top_k`, `top_p` and `min_p` left out or "
       "null are llama.cpp's 0.8, 40, 0.95 and 0.05 where the model's file does not set them"),
    _h("top_p", _V1, "nucleus sampling, in (0, 1]"),
    _h("top_k", _V1, "sample among the k likeliest tokens (and any tied with the k-th, as "
       "transformers' and vLLM's; llama.cpp keeps k), up to 2**31-1; 0 or -1: off (so is any k "
       "at or above the vocabulary size)", _VL),
    _h("n", _V1, "choices per prompt, 1 to 128 (the usage counts each prompt once, as OpenAI); "
       "choice 0 computes the prompt and its prompt logprobs, and the others, started after "
       "it, take the prompt's full blocks from the prefix cache (when it is on); requests are "
       "admitted first come, first served, as in vLLM, so one whose choices fill the KV cache "
       "holds the requests after it until its choices finish"),
    _h("n_cmpl", _V1, "llama.cpp's name for `n` (if both are given they must agree)", _LC),
    _h("seed", _V1, "choice i of n samples from seed + i (modulo 2**64): same seed, same text "
       "(beside other requests, up to rounding: README, \"Alone or batched\"); -1 is no seed "
       "(vLLM's and llama.cpp's random)"),
    _h("stop", _V1, "a string or a list of up to 64 strings, of 16,384 characters in all; the "
       "text ends before the first match (an empty string, which would match anywhere, is "
       "ignored), a tool call's text too: a call cut by one keeps what came before it, and the "
       "finish reason is `stop`; the logprobs keep the tokens of the match, as vLLM's (the "
       "text drops it)"),
    _h("stop_token_ids", _V1, "token ids that end a choice (ids of the vocabulary)", _VL),
    _h("ignore_eos", _V1, "keep generating past end-of-sequence tokens (a grammar that is "
       "complete still ends the output)", _VL),
    _h("min_tokens", _V1, "end-of-sequence, stop token ids and stop strings cannot end the "
       "output within this many tokens (a grammar that is complete still ends it)", _VL),
    _h("presence_penalty", _V1, "in [-2, 2]: minus this from the logit of every token already "
       "generated (with `repeat_last_n`, and on /completion and /infill: every token among the "
       "last `repeat_last_n` of the prompt and output, as llama.cpp's)"),
    _h("frequency_penalty", _V1, "in [-2, 2]: minus this times the token's count among the "
       "generated tokens (with `repeat_last_n`, and on /completion and /infill: among the last "
       "`repeat_last_n` of the prompt and output, as llama.cpp's)"),
    _h("repetition_penalty", _V1, "> 0 (1: off): logits of tokens in the prompt or the output "
       "divided by it if positive, multiplied if not (CTRL's, transformers')", _VL),
    _h("repeat_penalty", _V1, "llama.cpp's name for `repetition_penalty` (with `repeat_last_n`, "
       "and on /completion and /infill: over the last `repeat_last_n` tokens of the prompt and "
       "output, as llama.cpp's)", _LC),
    _h("repeat_last_n", _V1, "llama.cpp's window of the penalties: the repetition, frequency "
       "and presence penalties read the last n tokens of the prompt and output, as llama.cpp's "
       "(-1: all of them; 0: the penalties off); an integer >= -1; /completion's and /infill's "
       "default 64 (llama.cpp's); left out on /v1, vLLM's penalties (the repetition penalty over "
       "the prompt and output, the others over the output); with no penalty set it changes "
       "nothing", _LC),
    _h("min_p", _V1, "in [0, 1]: drop tokens less likely than min_p times the likeliest", _VL),
    _h("logit_bias", _V1, "{token id: bias in [-100, 100]} added to the logits (before the "
       "penalties, as vLLM)"),
    _h("logprobs", _CO, "N in [0, 20]: each token's logprob and the N likeliest, in the legacy "
       "shape (`tokens`, `token_logprobs`, `top_logprobs`, `text_offset`: a token that holds "
       "part of a character named by its bytes, `bytes:\\xf0`, as OpenAI's, and starting "
       "where its character starts in the text); of the model's "
       "distribution before penalties, bias, temperature and any grammar's mask (so the "
       "likeliest may be tokens a grammar forbids; with `post_sampling_probs`, of the "
       "distribution drawn from, the echoed prompt's still the model's)"),
    _h("logprobs", _C, "true: each token's logprob in `choices[].logprobs.content` (before "
       "penalties, bias, temperature and any grammar's mask; with `post_sampling_probs`, of "
       "the distribution drawn from)"),
    _h("top_logprobs", _C, "0 to 20 likeliest tokens at each position (above 0 needs `logprobs: "
       "true`; 0 without it asks for nothing, a no-op, as vLLM)"),
    _h("echo", _CO, "the prompt before the completion in `text`; with `logprobs`, the prompt's "
       "tokens first in it too (the first with null logprobs); with `max_tokens: 0`, the prompt "
       "alone (OpenAI's scoring form, as vLLM: finish reason `length`, no completion tokens; the "
       "request runs one token, so the prompt must leave room for it)"),
    _h("echo", _C, "true: the last message's text (its parts joined by newlines) before the "
       "answer's content, where it is an assistant's or `add_generation_prompt` is false (as "
       "vLLM's, whose answer then takes that message's role; here it stays `assistant`): with "
       "`continue_final_message`, the whole message; streamed, in each choice's opening chunk; "
       "no logprobs for it (vLLM's also returns the prompt's logprobs then: ask "
       "`prompt_logprobs`)", _VL),
    _h("logprob_token_ids", _V1, "up to 128 token ids (each once): each position's "
       "`top_logprobs` lists the token chosen, then these in the order given (vLLM's), with "
       "their logprobs of the model's distribution, instead of the likeliest; needs `logprobs` "
       "(chat: true, and `top_logprobs` is not read; completions: any N, which only sizes an "
       "echoed prompt's); not beside `post_sampling_probs` or `echo` with `max_tokens: 0`; "
       "`[]`: none", _VL),
    _h("prompt_logprobs", _V1, "N in [0, 20]: each prompt token's logprob and the N likeliest "
       "(completions: per choice; chat: in the response); not with `stream` (as vLLM)", _VL),
    _h("bad_words", _V1, "up to 1,024 strings of up to 100 characters, never generated: each "
       "word's tokens, as it encodes at the start of text and after a space, cannot all follow "
       "each other", _VL),
    _h("allowed_token_ids", _V1, "the only token ids that may be generated; a 400 if the stop "
       "tokens masked before `min_tokens` or one-token `bad_words` leave none of them", _VL),
    _h("response_format", _V1, '`{"type": "text"}` (none), `{"type": "json_object"}` (any JSON '
       'object) or `{"type": "json_schema", "json_schema": {"name", "schema", "strict", '
       '"description"}}`: the output is constrained to the schema as JSON Schema reads it; with '
       '`strict: true` the schema must be an object at its root and close every object '
       '(`"additionalProperties": false`, every property required: a 400 otherwise, as '
       "OpenAI), so no key is left open; a schema that does not compile is a 400, and so is "
       "`json_schema` with another type. `name` and `description` are no-ops: neither is shown "
       "to the model, the schema alone constrains the output (a `name` outside OpenAI's "
       "`^[A-Za-z0-9_-]{1,64}$` is a 400, as OpenAI); beside `tools` (`tool_choice` `auto`) an "
       "answer either calls or is JSON in this format, as OpenAI's; beside `required` or a "
       "named function, checked and a no-op: the answer must call, leaving no text to shape "
       "(as vLLM)"),
    _h("structured_outputs", _V1, "one of `json` (a schema), `regex`, `choice` (strings), "
       "`grammar` (Lark or GBNF), `json_object`: the output is constrained to it (two are a "
       "400; none, only options: no constraint, as vLLM)", _VL),
    _h("guided_json", _V1, "vLLM's older name for `structured_outputs.json` (vLLM 0.32 "
       "ignores it, with a warning in its log)", _VL),
    _h("guided_regex", _V1, "vLLM's older name for `structured_outputs.regex` (vLLM 0.32 "
       "ignores it, with a warning in its log)", _VL),
    _h("guided_choice", _V1, "vLLM's older name for `structured_outputs.choice` (vLLM 0.32 "
       "ignores it, with a warning in its log)", _VL),
    _h("guided_grammar", _V1, "vLLM's older name for `structured_outputs.grammar` (vLLM 0.32 "
       "ignores it, with a warning in its log)", _VL),
    _h("json_schema", _V1, "llama.cpp's: a JSON schema the output follows", _LC),
    _h("grammar", _V1, 'llama.cpp\'s: a GBNF grammar the output follows ("": none)', _LC),
    _h("stream", _V1, "server-sent events, one chunk per token (or `--stream-interval` tokens)"),
    _h("stream_options", _V1, "see `stream_options.*`; only with `stream: true` (a 400 "
       "otherwise, as OpenAI and vLLM)"),
    _h("stream_options.include_usage", _V1, "a last chunk with the usage"),
    _h("add_special_tokens", _CO, "false: a text prompt without the tokenizer's special "
       "tokens (its BOS, where it adds one: for a prompt that holds its own), as vLLM's; "
       "default true", _VL),
    _h("add_special_tokens", _C, "true: the tokenizer's special tokens (a BOS) before the "
       "rendered prompt too, which the template already wrote its own into, as vLLM's; "
       "default false", _VL),
    _h("return_tokens_as_token_ids", _V1, "true: logprobs name each token `token_id:N`, as "
       "vLLM's (completions' `tokens` and `top_logprobs` keys, chat's `token`s; chat's `bytes` "
       "stay the token's own, and completions' `text_offset` counts the text's characters, "
       "where vLLM's counts the names)", _VL),
    _h("documents", _C, "[{string: string}] (such as `title` and `text`), given to a chat "
       "template that reads `documents` (retrieval-augmented ones: Command-R's, Granite's), "
       "as vLLM and transformers give them; where the template reads none (SmolLM2's) a 400, "
       "[] none", _VL),
    _h("skip_special_tokens", _V1, "false: special tokens' text in the output's text (a "
       "stop token's, which ends it, only with `include_stop_str_in_output`), as vLLM's; the "
       "text of tool calls and reasoning is read from that text", _VL),
    _h("include_stop_str_in_output", _V1, "true: the stop string that ended the text stays at "
       "its end (a stream sends the text as it comes, holding nothing back), and so does the "
       "text of a stop token that ended it (a `stop_token_ids` id's; an end of sequence's, a "
       "special token, with `skip_special_tokens: false`), as vLLM's", _VL),
    _h("stream_options.continuous_usage_stats", _V1, "true: every chunk's `usage` is its "
       "choice's so far (its prompt's tokens and the tokens it has written), as vLLM's; needs "
       "`include_usage: true` (a 400 otherwise: vLLM gives none then)", _VL),
    _h("return_token_ids", _V1, "true: the token ids beside the text, as vLLM's: chat's "
       "`prompt_token_ids` in the response (streamed: in each choice's opening chunk) and "
       "`token_ids` in each choice; completions' `prompt_token_ids` and `token_ids` in each "
       "choice (streamed: the prompt's in a choice's first chunk); a stream's chunks carry the "
       "ids that came since the choice's last chunk (a token whose text waits for the rest of "
       "its character goes out with it), the stop token's in the last; with `echo` the "
       "prompt's text stays in `text` (vLLM's leaves it out then)", _VL),
    _h("stream_interval", _V1, "tokens per streamed chunk after the first, >= 1, for this "
       "request (default: the server's `--stream-interval`; a smaller value wins over it, where "
       "vLLM raises it to the server's); without `stream` it changes nothing", _VL),
    _h("request_id", _V1, "the response's `id` is `chatcmpl-`/`cmpl-`/`resp_` + this (not empty); "
       "without it, + the `X-Request-Id` header where sent (vLLM's), which the response sends "
       "back", _VL),
    _h("truncate_prompt_tokens", _V1, "keep only the prompt's last k tokens (-1: the context "
       "length), or its first with `truncation_side: \"right\"`", _VL),
    _h("truncation_side", _V1, "`left` (default: the prompt's first tokens are dropped) or "
       "`right` (its last ones are); without `truncate_prompt_tokens` a no-op (nothing is cut)",
       _VL),
    _h("add_generation_prompt", _C, "end the prompt with the assistant's turn opening "
       "(default true)", _VL),
    _h("continue_final_message", _C, "continue the last message instead of opening a new turn "
       "(needs `add_generation_prompt: false`)", _VL),
    _h("chat_template_kwargs", _C, "extra variables for the chat template; a name the template "
       "does not read is refused", _VL),
    _h("messages[].role", _C, "system, user, assistant, developer (as system) or tool"),
    _h("messages[].content", _C, "a string or a list of one or more text parts (null: an "
       "assistant message with `tool_calls`)"),
    _h("messages[].name", _C, "passed to the chat template; where the model's template does not "
       "show it (SmolLM2's does not), written before the text of a system, developer or user "
       "message as `name: text` (so the model knows who speaks, as SillyTavern's own \"message "
       "content\" mode writes group chats), a no-op on an assistant's (its own label, as "
       "multi-agent frameworks stamp it) and on a tool result's, which must name its call's "
       "function"),
    _h("messages[].tool_calls", _C, "an assistant's earlier calls (`id`, `type: \"function\"`, "
       "`function.name`, `function.arguments` as JSON text), rendered by a template with tool "
       "support, else as `<tool_call>` blocks in its content"),
    _h("messages[].tool_call_id", _C, "a `tool` message's call: it must name a call of the "
       "assistant message just before, every call needs its result before the next message, "
       "and one result only (OpenAI's rules); without template tool support results are shown to the model "
       "in the calls' order, as `<tool_response>` blocks of a user turn"),
    _h("tools", _C, "functions the model may call (`type: \"function\"`, `function.name`, "
       "`description`, `parameters` as a JSON schema of an object, every call held to it; "
       "`strict: true` as for `response_format`): shown through the chat template, or a default system prompt where it has "
       "no tool support (README, \"Tool calling\"); calls come back in `message.tool_calls`"),
    _h("tool_choice", _C, "`auto` (the default with tools: text, or calls the grammar holds to "
       "their schemas), `none` (no calls: the text as written), `required` (at least one call), "
       "or `{\"type\": \"function\", \"function\": {\"name\": ...}}` (exactly that call; "
       "its answer finishes with `stop`, as OpenAI's); without `tools`, `none` and `auto` are "
       "no-ops and a named function a 400"),
    _h("parallel_tool_calls", _C, "false: at most one call per answer (default true); a no-op "
       "without `tools`"),
    _h("messages[].content[].type", _C, "`text`; other part types (images, audio, files) are "
       "refused"),
    _h("messages[].content[].text", _C, "the part's text; parts are joined with newlines"),
    # -- honoured: /generate (the seeds' API)
    _h("prompt", _G, "the prompt text", _RI),
    _h("max_new_tokens", _G, "most tokens to generate (default 64)", _RI),
    _h("temperature", _G, "used when `do_sample` (default 1)", _RI),
    _h("top_k", _G, "used when `do_sample`, up to 2**31-1; 0 or -1: off", _RI),
    _h("top_p", _G, "used when `do_sample`, in (0, 1]", _RI),
    _h("do_sample", _G, "sample (true) or greedy (false, the default)", _RI),
    _h("stop_on_eos", _G, "end at end-of-sequence tokens (default true)", _RI),
    _h("seed", _G, "used when `do_sample`: seed of the sampler (greedy draws nothing)", _RI),
    _h("stop", _G, "a string or a list of up to 64 strings, of 16,384 characters in all (an "
       "empty one is ignored)", _RI),
    _h("stream", _G, "stream the raw text (a failure cuts the response short: the client's "
       "read fails)", _RI),
    # -- no-ops
    _noop("user", _V1, is_str, "an end-user id for the caller's own records"),
    _noop("prompt_cache_retention", _C, equals("in_memory", "24h"), "how long OpenAI keeps a "
          "cached prefix (`in_memory` or `24h`); prefix caching here is automatic and exact, "
          "cached or not the text is the same"),
    _noop("metadata", _C, metadata, "stored-completion tags (up to 16 strings of up to 512 "
          "characters, keys up to 64); nothing is stored"),
    _noop("store", _C, is_bool, "nothing is stored; the output is the same"),
    _noop("service_tier", _C, equals("auto", "default", "flex", "scale", "priority"),
          "one tier here; any of OpenAI's tiers changes latency only"),
    _noop("prompt_cache_key", _C, is_str, "prefix caching is automatic and exact"),
    _noop("safety_identifier", _C, is_str, "an end-user id for the caller's own records"),
    _noop("stream_options.include_obfuscation", _V1, is_bool, "chunks are never padded"),
    _noop("cache_salt", _V1, is_str, "isolates prefix-cache entries; cached or not, the text is "
          "the same", _VL),
    _noop("cache_prompt", _V1, is_bool, "caching changes speed, never the text: prefix caching "
          "is automatic and exact here (or off, `--no-prefix-cache`)", _LC),
    _noop("id_slot", _V1, is_int, "no slots here", _LC),
    _noop("n_keep", _V1, is_int, "the context is never shifted (a prompt that does not fit is a "
          "400)", _LC),
    _noop("n_discard", _V1, is_int, "the context is never shifted (a prompt that does not fit "
          "is a 400)", _LC),
    _noop("n_cache_reuse", _V1, is_int, "prefix caching is automatic and exact (no chunks "
          "reused by shifting)", _LC),
    _noop("backend_sampling", _V1, is_bool, "where the sampler runs; one sampler here, the "
          "same draws either way", _LC),
    *(_noop(f"speculative.{k}", _V1, check, "no speculative decoding here (a flat key, as "
            "llama.cpp spells it); drafts change speed, not the text", _LC)
      for k, check in (("n_max", is_int), ("n_min", is_int), ("p_min", is_num), ("type", is_str),
                       ("ngram_size_n", is_int), ("ngram_size_m", is_int),
                       ("ngram_m_hits", is_int))),
    _noop("adaptive_decay", _V1, is_num, _ONLY_WITH.format("adaptive_target"), _LC),
    *(_noop(f"reasoning_budget_{k}", _CO, check, _ONLY_WITH.format("reasoning_budget_tokens"),
            _LC)
      for k, check in (("start_tag", is_str), ("end_tag", is_str), ("message", is_str),
                       ("arm_immediately", is_bool))),
    _noop("session_id", _V1, is_str, "a conversation's id for routing; one engine here", _VL),
    _noop("return_token_offsets", _V1, is_bool, "only read by vLLM's render endpoints", _VL),
    _noop("return_mm_kwargs", _V1, is_bool, "only read by vLLM's render endpoints", _VL),
    _noop("mm_payload", _V1, equals("tensors", "none"), "what vLLM's render endpoints return for "
          "multimodal items (`return_mm_kwargs`' successor)", _VL),
    _noop("routed_experts_prompt_start", _V1, is_int, "where returned expert routing starts; "
          "none is returned (no mixture-of-experts data here)", _VL),
    _noop("spaces_between_special_tokens", _V1, is_bool, "no value changes the text: only a "
          "slow (Python) tokenizer's decode reads it, and every tokenizer here is a fast one "
          "(vLLM's fast path leaves it out too)", _VL),
    _noop("length_penalty", _V1, is_num, _ONLY_WITH.format("use_beam_search"), _VL),
    _noop("guided_decoding_backend", _V1, is_str, "one grammar engine here (llguidance); any name "
          "gives the same constraint", _VL),
    _noop("structured_outputs.disable_fallback", _V1, is_bool, "one grammar engine here: nothing "
          "to fall back to", _VL),
    _noop("structured_outputs.disable_any_whitespace", _V1, is_bool, "JSON is written compact "
          "here either way (false only lets whitespace in; none is written)", _VL),
    _noop("mirostat_tau", _V1, is_num, _ONLY_WITH.format("mirostat"), _LC),
    _noop("mirostat_eta", _V1, is_num, _ONLY_WITH.format("mirostat"), _LC),
    _noop("dynatemp_exponent", _V1, is_num, _ONLY_WITH.format("dynatemp_range"), _LC),
    # -- refused unless neutral: sampling
    _ref("n_probs", _V1, equals(0), "0", "token probabilities", _LC),
    _h("suffix", _CO, "the text after the completion: the prompt and it are filled in between "
       "(fill-in-the-middle, built as llama.cpp's /infill builds it; the answer is the middle "
       "alone) where the model has FIM tokens, else a 400; `\"\"` asks for nothing; text prompts "
       "only, not beside `echo` or `truncate_prompt_tokens`"),
    _ref("best_of", _V1, best_of, "equal to `n`", "best of more candidates than returned"),
    _ref("use_beam_search", _V1, equals(False), "false", "beam search", _VL),
    _ref("typical_p", _V1, equals(1), "1", "locally typical sampling", _LC),
    _ref("typ_p", _V1, equals(1), "1", "locally typical sampling: llama.cpp's web page's name "
         "for `typical_p` (llama.cpp itself reads `typical_p` and ignores this one)", _LC),
    _ref("tfs_z", _V1, equals(1), "1", "tail-free sampling", _LC),
    _ref("top_n_sigma", _V1, at_most_zero, "<= 0", "top-n-sigma sampling", _LC),
    _ref("min_keep", _V1, equals(0, 1), "0 or 1", "a floor on kept candidates", _LC),
    _ref("mirostat", _V1, equals(0), "0", "mirostat sampling", _LC),
    _ref("dynatemp_range", _V1, equals(0), "0", "dynamic temperature", _LC),
    _h("dry_multiplier", _V1, "llama.cpp's DRY (\"don't repeat yourself\"), >= 0: where the "
       "text's last tokens repeat a run of `dry_allowed_length` or more tokens seen earlier in "
       "the window, the token that followed that run has its logit lowered by "
       "`dry_multiplier * dry_base ** (run length - dry_allowed_length)` (after the penalties, "
       "before the temperature and the truncation, greedy requests too, as llama.cpp's chain); "
       "a run never reaches back past a sequence breaker, and a token that is one is never "
       "lowered; 0: off (the other `dry_*` fields then change nothing); below 0 a 400 "
       "(llama.cpp would make repeats likelier)", _LC),
    _h("dry_base", _V1, ">= 1, default 1.75: the growth of DRY's penalty with the run's "
       "length (the exponent capped where the power would pass fp32's range, as llama.cpp "
       "computes it); below 1 a 400 (llama.cpp silently takes 1.75)", _LC),
    _h("dry_allowed_length", _V1, "an integer >= 0, default 2: the longest run DRY leaves "
       "alone (0: every token that followed any earlier token of the window is lowered by "
       "at least `dry_multiplier`, as llama.cpp)", _LC),
    _h("dry_penalty_last_n", _V1, "an integer >= -1, default -1: DRY's window, the last n "
       "tokens of the prompt and the output (-1: all of them; 0: DRY off, as llama.cpp)", _LC),
    _h("dry_sequence_breakers", _V1, "up to 64 non-empty strings of up to 40 bytes, default "
       "`[\"\\n\", \":\", \"\\\"\", \"*\"]` (llama.cpp's): a token whose text holds "
       "one, or begins one that the next tokens complete (llama.cpp's reading of the "
       "vocabulary), ends the runs DRY looks back over; `[]`: none (a 400 in llama.cpp); "
       "an empty string or one past 40 bytes is a 400 (llama.cpp skips the one, cuts the "
       "other)", _LC),
    _h("xtc_probability", _V1, "llama.cpp's XTC, in [0, 1]: each step's chance that, where two "
       "or more tokens are at least `xtc_threshold` likely, all of them go but the least likely "
       "(of the distribution top-k, top-p and min-p left, before a late temperature, as "
       "llama.cpp's chain; a greedy request's XTC runs where the temperature is last, so the "
       "pick may not be the argmax); the draw is the request's own with a `seed`; 0: off", _LC),
    _h("xtc_threshold", _V1, "in [0, 1], default 0.1: the probability from which a token is a "
       "top choice; above 0.5 XTC is off (no two tokens reach it), as llama.cpp's", _LC),
    _h("samplers", _V1, "llama.cpp's chain: the samplers that run, in order (names, any "
       "case, or a string of its letters); one left out does not run (its parameter neutral, "
       "the temperature 1); `infill` is its infill sampler (after a top_k of at most 1,000); "
       "an order this engine cannot run "
       "(the penalties, then DRY, top-k, top-p, min-p, XTC and infill, the temperature after "
       "DRY, before or after all the others) is a 400 where it would change the output; /completion's and /infill's "
       "default: llama.cpp's (the temperature last)", _LC),
    _ref("logits_processors", _V1, equals([]), "[]", "custom logits processors", _VL),
    _h("t_max_predict_ms", _V1, "past this many ms after the first token, a token holding a "
       "newline is the last (finish \"length\"); whole ms (a fraction is cut, as llama.cpp "
       "reads it); <= 0: no limit", _LC),
    _h("n_indent", _V1, "a line after the first indented by fewer spaces or tabs ends the "
       "text at its first other character, cut there (finish \"length\"); 0: none", _LC),
    _ref("priority", _V1, equals(0), "0", "priority scheduling", _VL),
    _ref("adaptive_target", _V1, negative, "< 0", "adaptive-p sampling", _LC),
    _ref("reasoning_budget_tokens", _CO, negative, "< 0", "a budget of reasoning tokens (a "
         "chat feature)", _LC),
    _ref("thinking_token_budget", _CO, equals(-1), "-1", "a budget of reasoning tokens (a "
         "chat feature)", _VL),
    _ref("watermarking", _V1, equals(False), "false", "watermarked sampling", _VL),
    _ref("repetition_detection", _V1, never, "null", "an end on repeated n-grams", _VL),
    # -- refused unless neutral: structured output, tools, other inputs and outputs
    _ref("tools", _CO, equals([]), "[]", "tool calling (it is a chat feature)"),
    _ref("tool_choice", _CO, tool_choice_none, '"none" or "auto"', "tool calling"),
    _ref("parse_tool_calls", _C, equals(True), "true", "tool calls left in the text", _LC),
    _ref("parse_tool_calls", _CO, equals(False), "false", "tool calls parsed out of a "
         "completion", _LC),
    _ref("functions", _V1, equals([]), "[]", "function calling (deprecated)"),
    _ref("function_call", _V1, function_call_neutral, '"none" or "auto" (beside `tools`: '
         'equal to `tool_choice`)', "function calling"),
    _ref("guided_whitespace_pattern", _V1, never, "null", "the whitespace allowed in guided "
         "JSON", _VL),
    _ref("structured_outputs.whitespace_pattern", _V1, never, "null", "the whitespace allowed "
         "in JSON", _VL),

    _ref("structured_outputs.disable_additional_properties", _V1, equals(False), "false",
         "objects closed where a schema leaves them open", _VL),
    _ref("structured_outputs.structural_tag", _V1, never, "null", "structural tags", _VL),
    _ref("structural_tag", _V1, never, "null", "structural tags (vLLM's older name)", _VL),
    _ref("grammar_lazy", _V1, equals(False), "false", "a grammar that starts at a trigger", _LC),
    _ref("grammar_triggers", _V1, equals([]), "[]", "a lazy grammar's triggers", _LC),
    _ref("preserved_tokens", _V1, equals([]), "[]", "tokens kept whole for a grammar", _LC),
    _ref("chat_format", _V1, equals(0), "0 (content only)", "a parser of the output", _LC),
    _ref("chat_parser", _V1, never, "null", "a parser of the output", _LC),
    _ref("thinking_forced_open", _V1, equals(False), "false", "an output that opens in a "
         "reasoning block", _LC),
    _h("include_reasoning", _C, "false: the reasoning read apart (`--reasoning-parser`) left "
       "out of the answer (/v1/responses: no `reasoning` item; its tokens still in the usage's "
       "`reasoning_tokens`); without a parser only true (the default) is taken, a 400 otherwise",
       _VL),
    _ref("prompt_embeds", _CO, never, "null", "prompts as embeddings", _VL),
    _ref("chat_template", _C, never, "null", "a request's own chat template", _VL),
    _ref("mm_processor_kwargs", _V1, equals({}), "{}", "multimodal processing", _VL),
    _ref("media_io_kwargs", _C, equals({}), "{}", "multimodal inputs' loading", _VL),
    _ref("image_data", _V1, equals([]), "[]", "images", _LC),
    _ref("multimodal_data", _V1, equals([]), "[]", "multimodal inputs", _LC),
    _ref("lora", _V1, equals([]), "[]", "LoRA adapters", _LC),
    _ref("modalities", _C, equals(["text"]), '["text"]', "audio output"),
    _ref("audio", _C, never, "null", "audio output"),
    _ref("prediction", _C, never, "null", "predicted outputs"),
    _ref("web_search_options", _C, never, "null", "web search"),
    _ref("moderation", _C, never, "null", "moderation of the input and output"),
    _ref("prompt_cache_options", _C, never, "null", "explicit cache breakpoints and their "
         "lifetime, and cache diagnostics (prefix caching here is automatic and exact)"),
    _ref("reasoning_effort", _CO, equals("none"), '"none"', "reasoning models' effort (a chat "
         "template's variable)"),
    _ref("verbosity", _C, equals("medium"), '"medium" (OpenAI\'s default)', "reasoning "
         "models' verbosity"),
    _h("reasoning_format", _C, '"none": this answer\'s thinking left in `content`; "auto" or '
       '"deepseek" (or left out): read apart as the server\'s `--reasoning-parser` reads it; '
       'without one, "auto" reads nothing apart (the model\'s format has no thinking to read: '
       "llama.cpp's web page sends it on every request) and \"deepseek\" is a 400", _LC),
    _ref("reasoning_format", _CO, equals("none"), '"none"', "reasoning extraction (completions "
         "have no chat answer to read it from)", _LC),
    _ref("return_tokens", _V1, equals(False), "false", "token ids in the response", _LC),
    _h("reasoning_effort", _C, "handed to the chat template as vLLM hands it: its "
       "`reasoning_effort` variable, and `enable_thinking` (false for \"none\"; a "
       "`chat_template_kwargs` value wins), where the template reads them (Qwen3's reads "
       "`enable_thinking`); a template that reads neither (SmolLM2's) has no effort to set: a "
       "400 for any value but \"none\", which asks nothing of it"),
    _h("thinking_token_budget", _C, "n >= 0: once the answer's thinking block (`<think>`, opened "
       "by the output or the prompt) holds n tokens, `</think>` is the only token it may take "
       "(a token at a time where it is several) and the answer follows; a block opened again "
       "counts anew; -1 (or null): no budget; needs the server's `--reasoning-parser`, as "
       "vLLM's needs its reasoning config (a 400 otherwise); vLLM's tag forced is the parser's "
       "end too", _VL),
    _h("reasoning_budget_tokens", _C, "n >= 0: as `thinking_token_budget` (both given, they must "
       "agree), with llama.cpp's message and tags below; the tags are the server's "
       "`--reasoning-parser`'s unless both are given (without either, a 400); < 0 (or null): no "
       "budget", _LC),
    _h("reasoning_budget_message", _C, "text forced after a spent budget, before the closing "
       "tag (llama.cpp's: e.g. \"Time to answer.\"); without a budget a no-op", _LC),
    _h("reasoning_budget_start_tag", _C, "the text that opens a thinking block (default "
       "`<think>`); without a budget a no-op", _LC),
    _h("reasoning_budget_end_tag", _C, "the text that closes one, forced (default `</think>`); "
       "without a budget a no-op", _LC),
    _h("reasoning_budget_arm_immediately", _C, "true: the budget counts from the output's "
       "first token, as if a block were open (a template that opens thinking without the tag "
       "the prompt would end in); without a budget a no-op", _LC),
    _h("return_progress", _V1, "true: a stream carries, after each step that computed part of "
       "a prompt, a chunk without choices whose `prompt_progress` is `{total, cache, processed, "
       "time_ms}` (llama.cpp's: `processed` counts the cached tokens too; `time_ms` since the "
       "request came; the last one, `processed` = `total`, before the first token); a long "
       "prompt's chunks are up to `--lone-prefill-tokens` tokens less the step's decodes "
       "(what `--max-num-batched-tokens` leaves when another prompt's chunk comes first in "
       "the step; fewer where the KV cache is short; see Engine flags); llama.cpp's web page sends it on "
       "every streamed request; without `stream` a no-op, as in llama.cpp", _LC),
    _h("timings_per_token", _V1, "true: every streamed chunk of a choice carries its `timings` "
       "so far (llama.cpp's object, as /completion's: `cache_n`, `prompt_n`, `prompt_ms`, "
       "`predicted_n`, `predicted_ms`, `predicted_per_second`, ...; llama.cpp's web page sends "
       "it to show the speed); without `stream` a no-op (a streaming option, as in "
       "llama.cpp, whose answers carry `timings` either way)", _LC),
    _h("post_sampling_probs", _V1, "the logprobs asked for (`n_probs`, `logprobs`, "
       "`top_logprobs`) of the distribution the token was drawn from, after every sampler "
       "(greedy: the token alone), not the model's; tokens of probability 0 left out; on "
       "/completion and /infill as llama.cpp's `prob` and `top_probs`, on /v1 in OpenAI's "
       "shape (`logprob`); without logprobs asked for it changes nothing", _LC),
    _ref("response_fields", _V1, equals([]), "[]", "a response reshaped", _LC),
    _ref("kv_transfer_params", _V1, never, "null", "disaggregated serving", _VL),
    _ref("ec_transfer_params", _V1, never, "null", "disaggregated encoder caches", _VL),
    _ref("return_prompt_text", _V1, equals(False), "false", "the rendered prompt in the "
         "response", _VL),
    _ref("vllm_xargs", _V1, equals({}), "{}", "vLLM plug-in arguments", _VL),
    # -- refused unless neutral: chat message fields
    _ref("messages[].function_call", _C, never, "null", "function calls in the history"),
    _ref("messages[].refusal", _C, never, "null", "an assistant's refusal in the history"),
    _ref("messages[].audio", _C, never, "null", "audio in the history"),
    _h("messages[].reasoning", _C, "an assistant's earlier thinking (as `--reasoning-parser` "
       "read it apart), given to the chat template as `reasoning_content`, which thinking "
       "models' templates show or leave out as the model was trained (Qwen3's shows the turns "
       "after the last user message); a no-op where the template reads none (SmolLM2's, "
       "DeepSeek-R1's, which drop earlier thinking)", _VL),
    _h("messages[].reasoning_content", _C, "`reasoning`'s other name (DeepSeek's, llama.cpp's "
       "and vLLM's older); both given, they must agree", _VL),
    # the openai SDK's own message, sent back as `model_dump()` gives it
    _ref("messages[].annotations", _C, equals([]), "[]", "citations in the history"),
    _noop("messages[].tool_calls[].index", _C, is_int, "a streamed call's place in its message "
          "(the openai SDK keeps it when it gathers a stream); the list's order is the calls' "
          "order"),
    _noop("messages[].parsed", _C, anything, "the openai SDK's `parse()`/`stream()` helpers' parsed "
          "content, sent back with their message: the content is what the model saw"),
    _noop("messages[].tool_calls[].function.parsed_arguments", _C, anything, "the same helpers' "
          "parsed arguments: `arguments` are what the model saw"),
)  # fmt: skip

# /v1/responses and llama.cpp's /completion read these fields of chat's and /v1/completions'
# as those do (their requests become chat and completions requests: responses_input.py,
# llamacpp.py); their own rows are in their modules.
FIELDS = shared_with(
    shared_with(
        shared_with(FIELDS, CHAT, shared_with_responses, RESPONSES),
        COMPLETIONS,
        shared_with_llamacpp,
        LLAMACPP_COMPLETION,
    )  # fmt: skip
    + LLAMACPP_FIELDS,
    LLAMACPP_COMPLETION,
    shared_with_infill,
    LLAMACPP_INFILL,
) + (RESPONSES_FIELDS + EMBEDDINGS_FIELDS + SCORES_FIELDS)

# endpoint -> field name -> spec (a name appears at most once per endpoint)
TABLE: dict[str, dict[str, FieldSpec]] = {e: {} for e in ENDPOINTS}
for _spec in FIELDS:
    for _e in _spec.endpoints:
        assert _spec.name not in TABLE[_e], f"{_spec.name} twice for {_e}"
        TABLE[_e][_spec.name] = _spec


def honoured(endpoint: str, scope: str = "") -> set[str]:
    """Names of the honoured fields directly under `scope` ("", "messages[]", ...)."""
    prefix = scope + "." if scope else ""
    return {
        name[len(prefix) :]
        for name, spec in TABLE[endpoint].items()
        if spec.kind is Kind.HONOURED and name.startswith(prefix) and "." not in name[len(prefix) :]
    }
