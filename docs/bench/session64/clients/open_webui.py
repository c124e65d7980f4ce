"""Open WebUI (open-webui/open-webui), OpenAI connection.

Body reaching the server = the chat page's POST /api/chat/completions after backend/open_webui/main.py
chat_completion() pops chat_id/id/session_id/parent_id/tool_servers/background_tasks/model_item,
utils/middleware.py process_chat_payload() folds `params` in (utils/payload.py
apply_model_params_to_body_openai: temperature, top_p, min_p, max_tokens, frequency_penalty,
presence_penalty, reasoning_effort, seed, stop, logit_bias, response_format, and, in newer versions,
any other param key as-is, custom_params merged), and routers/openai.py generate_chat_completion()
pops `metadata`.  Default: no params set -> {model, messages, stream}; stream_options only when the
model's `usage` capability is ticked.  Task calls (title/tags/follow-ups) are stream:false with
max_tokens (or max_completion_tokens) set.
"""
from _common import peel, reset, MODEL, MSGS
C = "open_webui"; reset(C)
SRC = "open-webui backend/open_webui/main.py chat_completion + utils/payload.py + routers/openai.py"
peel(C, "default-chat", "/v1/chat/completions", {"stream": True, "model": MODEL, "messages": MSGS}, "chat", SRC)
peel(C, "usage-capability", "/v1/chat/completions",
     {"stream": True, "model": MODEL, "messages": MSGS, "stream_options": {"include_usage": True}}, "chat", SRC)
peel(C, "title-task", "/v1/chat/completions",
     {"model": MODEL, "messages": [{"role": "user", "content": "### Task:\nGenerate a concise title..."}],
      "stream": False, "max_tokens": 16}, "chat", SRC, "max_tokens 1000 in source, cut to 16")
peel(C, "advanced-params-sampling", "/v1/chat/completions",
     {"stream": True, "model": MODEL, "messages": MSGS, "temperature": 0.8, "top_p": 0.9, "top_k": 40,
      "min_p": 0.05, "max_tokens": 16, "frequency_penalty": 0.1, "presence_penalty": 0.1, "seed": 42,
      "stop": ["\n\n"]}, "chat", SRC, "Advanced Params panel values set by a user")
peel(C, "advanced-params-reasoning-effort", "/v1/chat/completions",
     {"stream": True, "model": MODEL, "messages": MSGS, "reasoning_effort": "medium", "max_tokens": 16},
     "chat", SRC, "Reasoning Effort set in Advanced Params (shown for every model)")
peel(C, "advanced-params-ollama-names", "/v1/chat/completions",
     {"stream": True, "model": MODEL, "messages": MSGS, "repeat_penalty": 1.1, "repeat_last_n": 64,
      "num_ctx": 8192, "max_tokens": 16}, "chat", SRC,
     "Ollama-named params (repeat_penalty, repeat_last_n, num_ctx) forwarded as-is by the newer payload.py")
peel(C, "image-attached", "/v1/chat/completions",
     {"stream": True, "model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": [
         {"type": "text", "text": "What is this?"},
         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]},
     "chat", SRC, "a picture attached to a text-only model")
