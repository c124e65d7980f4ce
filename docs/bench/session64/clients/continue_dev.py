"""Continue (continuedev/continue).

Chat, providers openai / vllm / lmstudio ...: core/llm/openaiTypeConverters.ts toChatBody() ->
{messages, model, max_tokens (DEFAULT_MAX_TOKENS 4096, core/llm/constants.ts), temperature, top_p,
frequency_penalty, presence_penalty, stream (true), stop, prediction, tool_choice, tools};
packages/openai-adapters/src/apis/OpenAI.ts modifyChatBody adds stream_options {include_usage: true}
and parallel_tool_calls:false with tools.  Autocomplete / raw: OpenAI.ts _legacystreamComplete ->
/v1/completions {prompt, model, max_tokens, ..., stream: true}.  Provider "llama.cpp":
core/llm/llms/LlamaCpp.ts -> POST /completion {model, prompt, stream, n_predict, frequency_penalty,
presence_penalty, min_p, mirostat, stop, top_k, top_p, temperature}.
max_tokens 4096 cut to 16.
"""
from _common import peel, reset, MODEL, MSGS
C = "continue"; reset(C)
S1 = "continuedev/continue core/llm/openaiTypeConverters.ts toChatBody + packages/openai-adapters/src/apis/OpenAI.ts"
peel(C, "chat-default", "/v1/chat/completions",
     {"messages": MSGS, "model": MODEL, "max_tokens": 16, "stream": True,
      "stream_options": {"include_usage": True}}, "chat", S1)
tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
          "parameters": {"type": "object", "properties": {"filepath": {"type": "string"}}, "required": ["filepath"]}}}]
peel(C, "agent-mode-tools", "/v1/chat/completions",
     {"messages": MSGS, "model": MODEL, "max_tokens": 16, "stream": True, "stream_options": {"include_usage": True},
      "tools": tools, "parallel_tool_calls": False}, "chat", S1)
STOPS = ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>", "<|endoftext|>", "</fim_middle>",
         "</code>", "\n\n", "\r\n\r\n", "/src/", "#- coding: utf-8", "```", "\ndef", "\nclass"]
peel(C, "autocomplete-legacy-completions", "/v1/completions",
     {"model": MODEL, "max_tokens": 16, "temperature": 0.01, "stream": True, "stop": STOPS,
      "prompt": "<fim_prefix>def add(a, b):\n    <fim_suffix>\n<fim_middle>"}, "cmpl",
     "continuedev/continue core/llm/llms/OpenAI.ts _legacystreamComplete")
S2 = "continuedev/continue core/llm/llms/LlamaCpp.ts _convertArgs/_streamComplete"
peel(C, "llamacpp-provider", "/completion",
     {"model": MODEL, "prompt": "def add(a, b):", "stream": True, "n_predict": 16}, "llamacpp", S2)
peel(C, "llamacpp-provider-model-autodetect", "/completion",
     {"model": "AUTODETECT", "prompt": "def add(a, b):", "stream": True, "n_predict": 16}, "llamacpp", S2,
     "model as written in config.yaml (llama.cpp ignores `model`)")
peel(C, "llamacpp-provider-options", "/completion",
     {"model": MODEL, "prompt": "def add(a, b):", "stream": True, "n_predict": 16, "min_p": 0.05,
      "mirostat": 0, "top_k": 40, "top_p": 0.9, "temperature": 0.2, "stop": ["\n\n"]}, "llamacpp", S2)
