"""Jan (janhq/jan) remote OpenAI-compatible provider: AI SDK openai-compatible chat body
{model, messages, stream, stream_options {include_usage}} plus the assistant's parameters injected by
web-app/src/lib/model-factory.ts createCustomFetch (max_output_tokens -> max_tokens, client-side keys
such as ctx_len and llama.cpp-only keys stripped for non-llama.cpp providers); parameter presets from
web-app/src/lib/predefinedParams.ts (temperature 0.7, top_p 0.95, top_k 2, penalties 0.7, max 2048)."""
from _common import peel, reset, MODEL, MSGS
C = "jan"; reset(C)
S = "janhq/jan web-app/src/lib/model-factory.ts createCustomFetch + predefinedParams.ts"
peel(C, "chat-default", "/v1/chat/completions",
     {"model": MODEL, "messages": MSGS, "stream": True, "stream_options": {"include_usage": True}}, "chat", S)
peel(C, "chat-preset-params", "/v1/chat/completions",
     {"model": MODEL, "messages": MSGS, "stream": True, "stream_options": {"include_usage": True},
      "max_tokens": 16, "temperature": 0.7, "frequency_penalty": 0.7, "presence_penalty": 0.7,
      "top_p": 0.95, "top_k": 2}, "chat", S, "max_output_tokens 2048 cut to 16")
