"""Zed (zed-industries/zed), OpenAI-compatible provider: crates/open_ai/src/completion.rs into_open_ai()
-> crates/open_ai/src/open_ai.rs Request {model, messages, stream, stream_options {include_usage:true},
max_completion_tokens, stop (omitted if empty), temperature (request's or Some(1.0)), tool_choice,
parallel_tool_calls (only if the model supports it and tools are sent), tools, prompt_cache_key
(thread id), reasoning_effort (model setting)}."""
from _common import peel, reset, MODEL
C = "zed"; reset(C)
S = "zed-industries/zed crates/open_ai/src/completion.rs into_open_ai + open_ai.rs Request"
msgs = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Say hi."}]
tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
peel(C, "agent-thread", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": True, "stream_options": {"include_usage": True},
      "max_completion_tokens": 16, "temperature": 1.0, "tool_choice": "auto", "tools": tools,
      "prompt_cache_key": "7b0c1e52-thread"}, "chat", S)
peel(C, "inline-assist-no-tools", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": True, "stream_options": {"include_usage": True},
      "max_completion_tokens": 16, "temperature": 1.0, "prompt_cache_key": "7b0c1e52-thread"}, "chat", S)
peel(C, "tool-result-turn", "/v1/chat/completions",
     {"model": MODEL, "stream": True, "stream_options": {"include_usage": True}, "max_completion_tokens": 16,
      "temperature": 1.0, "tools": tools, "tool_choice": "auto", "messages": msgs + [
          {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
           "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]},
          {"role": "tool", "content": "hello", "tool_call_id": "call_1"}]}, "chat", S,
     "assistant content null + tool result (RequestMessage::Assistant/Tool)")
peel(C, "custom-model-reasoning-effort", "/v1/chat/completions",
     {"model": MODEL, "messages": msgs, "stream": True, "stream_options": {"include_usage": True},
      "max_completion_tokens": 16, "temperature": 1.0, "reasoning_effort": "medium"}, "chat", S,
     "available_models[].reasoning_effort set in settings.json")
