"""Clients that build the body with the openai SDK / LangChain / LiteLLM, as they send it by default:
 - LangChain ChatOpenAI (langchain-openai): {model, messages, stream, stream_options {include_usage}
   when streaming with stream_usage}, temperature/max_completion_tokens only when set.
 - LibreChat custom endpoints (danny-avila/LibreChat, via LangChain JS ChatOpenAI): adds `user`
   (the LibreChat user id) and stream_options.
 - Aider via LiteLLM `openai/` or `hosted_vllm/` provider: {model, messages, stream: true,
   temperature: 0}; LiteLLM hosted_vllm maps max_completion_tokens -> max_tokens.
These were not re-read line by line in this session (see REPORT.md), so they are lower confidence."""
from _common import peel, reset, MODEL, MSGS
C = "openai_sdk_family"; reset(C)
peel(C, "langchain-chatopenai-stream", "/v1/chat/completions",
     {"model": MODEL, "messages": MSGS, "stream": True, "stream_options": {"include_usage": True}}, "chat",
     "langchain-ai/langchain libs/partners/openai ChatOpenAI._default_params (not re-read)")
peel(C, "librechat-custom", "/v1/chat/completions",
     {"model": MODEL, "messages": MSGS, "stream": True, "stream_options": {"include_usage": True},
      "user": "6650f1c2e4b0a1b2c3d4e5f6", "temperature": 1, "top_p": 1, "presence_penalty": 0,
      "frequency_penalty": 0, "max_tokens": 16}, "chat", "danny-avila/LibreChat (not re-read)")
peel(C, "aider-litellm", "/v1/chat/completions",
     {"model": MODEL, "messages": MSGS, "stream": True, "temperature": 0, "max_tokens": 16}, "chat",
     "Aider-AI/aider aider/models.py send_completion via litellm (not re-read)")
