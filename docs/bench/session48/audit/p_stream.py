from h import *
b = {"model": M, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "temperature": 0, "stream": True}
s, ev = sse("/v1/chat/completions", b); print("chat stream", s); [print("  ", short(e, 400)) for e in ev]
s, ev = sse("/v1/chat/completions", {**b, "stream_options": {"include_usage": True}, "n": 2}); print("chat stream usage n=2", s); [print("  ", short(e, 400)) for e in ev]
s, ev = sse("/v1/completions", {"model": M, "prompt": "hello", "max_tokens": 3, "temperature": 0, "stream": True, "stream_options": {"include_usage": True}, "logprobs": 1}); print("comp stream usage logprobs", s); [print("  ", short(e, 500)) for e in ev]
s, ev = sse("/v1/completions", {"model": M, "prompt": "hello", "max_tokens": 3, "temperature": 0, "stream": True, "echo": True, "logprobs": 1}); print("comp stream echo", s); [print("  ", short(e, 500)) for e in ev]
s, ev = sse("/v1/completions", {"model": M, "prompt": ["hello", "world"], "max_tokens": 2, "temperature": 0, "stream": True, "n": 2}); print("comp stream 2 prompts n=2", s); [print("  ", short(e, 300)) for e in ev]
s, ev = sse("/v1/chat/completions", {**b, "stop": "े"}); print("chat stream stop", s); [print("  ", short(e, 300)) for e in ev]
s, ev = sse("/v1/chat/completions", {**b, "logprobs": True, "top_logprobs": 1}); print("chat stream logprobs", s); [print("  ", short(e, 600)) for e in ev]
# error in stream: max_tokens too large
s, ev = sse("/v1/chat/completions", {**b, "max_tokens": 99999}); print("chat stream bad", s, ev)
