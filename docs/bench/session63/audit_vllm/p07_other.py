"""/tokenize, /detokenize, /health, /version, /metrics, /v1/embeddings, /v1/responses (plain, instructions,
stream events, store + retrieve), both servers."""
import json, httpx
from common import both, get, stream, MODEL, keydiff, trim, PORTS

U = [{"role": "user", "content": "What is the capital of France?"}]
r = both("/tokenize", {"model": MODEL, "prompt": "The capital of France is"}, label="tokenize prompt")
print("  keydiff", keydiff(r["vllm"][1], r["rose"][1]))
both("/tokenize", {"model": MODEL, "prompt": "The capital of France is", "add_special_tokens": False}, label="tokenize add_special_tokens false")
r = both("/tokenize", {"model": MODEL, "prompt": "The capital of France is", "return_token_strs": True}, label="tokenize return_token_strs")
r = both("/tokenize", {"model": MODEL, "messages": U}, label="tokenize messages", n=900)
r = both("/tokenize", {"model": MODEL, "messages": U, "add_generation_prompt": False}, label="tokenize messages no gen prompt", n=400)
TC = [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]
r = both("/tokenize", {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": None, "tool_calls": TC},
  {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 20C"}], "return_token_strs": True}, label="tokenize tool history", n=3000)
r = both("/detokenize", {"model": MODEL, "tokens": [504, 3575, 282, 4649, 314]}, label="detokenize")
r = both("/detokenize", {"model": MODEL, "tokens": [1, 504, 2]}, label="detokenize special tokens")
for path in ("/health", "/version", "/ping", "/v1/models/SmolLM2-135M-Instruct", "/load", "/is_sleeping", "/server_info"):
    for s in ("vllm", "rose"):
        rr = httpx.get(f"http://127.0.0.1:{PORTS[s]}{path}", timeout=30)
        print(f"  [{s}] GET {path} {rr.status_code} {rr.text[:200]!r}")
for s in ("vllm", "rose"):
    rr = httpx.get(f"http://127.0.0.1:{PORTS[s]}/metrics", timeout=30)
    names = sorted({l.split("{")[0].split(" ")[0] for l in rr.text.splitlines() if l and not l.startswith("#")})
    print(f"  [{s}] GET /metrics {rr.status_code} {len(names)} series; vllm: names: {[n for n in names if n.startswith('vllm:')][:40]}")
both("/v1/embeddings", {"model": MODEL, "input": "hello"}, label="embeddings", n=300)
# Responses API
r = both("/v1/responses", {"model": MODEL, "input": "What is the capital of France?", "max_output_tokens": 16, "temperature": 0}, label="responses plain", n=2500)
print("  keydiff", keydiff(r["vllm"][1], r["rose"][1]))
r = both("/v1/responses", {"model": MODEL, "input": "What is the capital of France?", "instructions": "Answer in French.", "max_output_tokens": 16, "temperature": 0}, label="responses instructions", n=400)
for s in ("vllm", "rose"):
    j = r[s][1]
    if isinstance(j, dict) and "output" in j:
        print(f"  [{s}] output_text: {[c.get('text') for o in j['output'] for c in o.get('content', []) or []]}")
r = both("/v1/responses", {"model": MODEL, "input": "Hi", "max_output_tokens": 8, "temperature": 0, "store": True}, label="responses store", n=300)
for s in ("vllm", "rose"):
    j = r[s][1]
    if isinstance(j, dict) and "id" in j:
        st, g = get(s, f"/v1/responses/{j['id']}")
        print(f"  [{s}] GET /v1/responses/{{id}} {st} {trim(g, 300)}")
        r2 = both("/v1/responses", {"model": MODEL, "input": "And again?", "previous_response_id": j["id"], "max_output_tokens": 8, "temperature": 0}, label=f"previous_response_id on {s} only", n=300)
r = both("/v1/responses", {"model": MODEL, "input": "Hi", "max_output_tokens": 8, "temperature": 0, "store": False}, label="responses store false", n=200)
print("=== responses stream events")
for s in ("vllm", "rose"):
    st, ev = stream(s, "/v1/responses", {"model": MODEL, "input": "What is the capital of France?", "max_output_tokens": 6, "temperature": 0, "stream": True})
    names = [e.get("type") if isinstance(e, dict) else e for e in ev]
    print(f"  [{s}] {st} events: {names}")
    sse = [e.get("__event__") for e in ev if isinstance(e, dict)]
    print(f"  [{s}] event: lines match type: {all(e.get('__event__') in (None, e.get('type')) for e in ev if isinstance(e, dict))}; has event lines: {any(sse)}")
    for e in ev:
        if isinstance(e, dict) and e.get("type") in ("response.output_text.delta", "response.completed", "response.content_part.added", "response.output_item.added"):
            print(f"     {trim({k: v for k, v in e.items() if k != '__event__'}, 500)}")
            if e.get("type") == "response.output_text.delta":
                break
    done = [e for e in ev if isinstance(e, dict) and e.get("type") == "response.completed"]
    if done:
        print(f"     completed: {trim(done[0], 700)}")
