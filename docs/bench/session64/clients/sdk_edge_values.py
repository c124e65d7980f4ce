"""Values clients built on the openai SDKs / AI SDK / LangChain pass explicitly (null or neutral),
one field at a time on a small chat body, to catch a neutral value refused.  Not one client's body:
a sweep of fields that appear in the bodies above or in the SDKs' typed request params."""
from _common import peel, reset, MODEL
C = "sdk_edge_values"; reset(C)
base = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8}
cases = {
    "n=1": {"n": 1}, "logprobs=false": {"logprobs": False}, "top_logprobs=null": {"top_logprobs": None},
    "tools=[]": {"tools": []}, "tool_choice=none-no-tools": {"tool_choice": "none"},
    "tool_choice=auto-no-tools": {"tool_choice": "auto"},
    "parallel_tool_calls=true-no-tools": {"parallel_tool_calls": True},
    "response_format=text": {"response_format": {"type": "text"}}, "stream_options=null": {"stream_options": None},
    "max_tokens=null": {"max_tokens": None}, "stop=null": {"stop": None}, "stop=[]": {"stop": []},
    "user=''": {"user": ""}, "seed=null": {"seed": None}, "functions=[]": {"functions": []},
    "function_call=auto": {"function_call": "auto"}, "modalities=[text]": {"modalities": ["text"]},
    "audio=null": {"audio": None}, "service_tier=auto": {"service_tier": "auto"},
    "service_tier=default": {"service_tier": "default"}, "store=false": {"store": False},
    "metadata={}": {"metadata": {}}, "prediction=null": {"prediction": None},
    "reasoning_effort=null": {"reasoning_effort": None}, "verbosity=null": {"verbosity": None},
    "temperature=2": {"temperature": 2}, "top_k=-1": {"top_k": -1}, "top_k=0": {"top_k": 0},
    "min_p=0": {"min_p": 0}, "repetition_penalty=1": {"repetition_penalty": 1},
    "stream=false+stream_options": {"stream": False, "stream_options": {"include_usage": True}},
    "content-parts-text": {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]},
    "content-parts-empty-list": {"messages": [{"role": "user", "content": []}]},
    "content-empty-string": {"messages": [{"role": "user", "content": ""}]},
    "assistant-prefill-last": {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
    "system-only": {"messages": [{"role": "system", "content": "You are terse."}]},
    "two-system-messages": {"messages": [{"role": "system", "content": "A"}, {"role": "system", "content": "B"}, {"role": "user", "content": "Hi"}]},
    "model-unknown-name": {"model": "gpt-4o-mini"},
    "model-empty": {"model": ""},
    "extra_body-key": {"extra_body": {"top_k": 20}},
}
for label, extra in cases.items():
    b = dict(base); b.update(extra)
    peel(C, label, "/v1/chat/completions", b, "chat", "openai SDK typed params / client practice")
