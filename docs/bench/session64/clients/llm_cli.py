"""simonw/llm, llm/default_plugins/openai_models.py: Chat.execute + _Shared.build_kwargs
(stream_options {include_usage: true} when streaming), Completion.execute (`completion: true` models).
Options (-o temperature ...) are passed through as-is."""
from _common import peel, reset, MODEL
C = "llm_cli"; reset(C)
S = "simonw/llm llm/default_plugins/openai_models.py Chat.execute/build_kwargs"
msgs = [{"role": "user", "content": "Say hi."}]
peel(C, "chat-stream", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": True, "stream_options": {"include_usage": True}}, "chat", S)
peel(C, "chat-no-stream", "/v1/chat/completions", {"model": MODEL, "messages": msgs, "stream": False}, "chat", S)
peel(C, "chat-options", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": True, "stream_options": {"include_usage": True},
      "temperature": 0.5, "max_tokens": 16, "seed": 1, "top_p": 0.9, "frequency_penalty": 0.1,
      "presence_penalty": 0.1, "stop": "\n", "logit_bias": {"100": -5}}, "chat", S)
peel(C, "schema", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": False, "max_tokens": 16,
      "response_format": {"type": "json_schema", "json_schema": {"name": "output",
       "schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}, "chat", S)
peel(C, "completion-model", "/v1/completions",
     {"model": MODEL, "prompt": "Say hi.", "stream": True, "stream_options": {"include_usage": True},
      "max_tokens": 16, "logprobs": 2}, "cmpl", "simonw/llm openai_models.py Completion.execute")
