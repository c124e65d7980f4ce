"""The openai Python SDK against both servers: does every call parse, and do the parsed objects agree?"""
import json
from openai import OpenAI
from pydantic import BaseModel
from common import MODEL, PORTS

class City(BaseModel):
    city: str

def run(s):
    c = OpenAI(base_url=f"http://127.0.0.1:{PORTS[s]}/v1", api_key="x", max_retries=0, timeout=120)
    out = {}
    def tr(name, f):
        try:
            out[name] = f()
        except Exception as e:  # noqa: BLE001
            out[name] = f"EXC {type(e).__name__}: {str(e)[:250]}"
    U = [{"role": "user", "content": "What is the capital of France?"}]
    tr("models.list", lambda: [m.id for m in c.models.list()])
    tr("models.retrieve", lambda: c.models.retrieve(MODEL).id)
    tr("chat.create", lambda: c.chat.completions.create(model=MODEL, messages=U, max_tokens=8, temperature=0).choices[0].message.content)
    tr("chat.create max_completion_tokens", lambda: c.chat.completions.create(model=MODEL, messages=U, max_completion_tokens=3, temperature=0).choices[0].message.content)
    def stream_chat():
        st = c.chat.completions.create(model=MODEL, messages=U, max_tokens=8, temperature=0, stream=True, stream_options={"include_usage": True})
        txt, usage = "", None
        for ch in st:
            if ch.choices:
                txt += ch.choices[0].delta.content or ""
            if ch.usage:
                usage = ch.usage.model_dump(exclude_none=True)
        return txt, usage
    tr("chat.stream", stream_chat)
    tr("chat.parse (json_schema strict)", lambda: str(c.chat.completions.parse(model=MODEL, messages=U, max_tokens=24, temperature=0, response_format=City).choices[0].message.parsed))
    def chat_stream_helper():
        with c.chat.completions.stream(model=MODEL, messages=U, max_tokens=24, temperature=0, response_format=City) as st:
            for _ in st:
                pass
            return str(st.get_final_completion().choices[0].message.parsed)
    tr("chat.completions.stream helper", chat_stream_helper)
    TOOLS = [{"type": "function", "function": {"name": "get_weather", "strict": True, "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}}]
    def tools_roundtrip():
        m = [{"role": "user", "content": "Weather in Paris?"}]
        r = c.chat.completions.create(model=MODEL, messages=m, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48, temperature=0)
        msg = r.choices[0].message
        m.append(msg.model_dump(exclude_none=True))  # send the SDK's own message back
        for tc in msg.tool_calls or []:
            m.append({"role": "tool", "tool_call_id": tc.id, "content": "sunny"})
        r2 = c.chat.completions.create(model=MODEL, messages=m, tools=TOOLS, max_tokens=12, temperature=0)
        return [tc.function.model_dump() for tc in msg.tool_calls or []], r.choices[0].finish_reason, r2.choices[0].message.content
    tr("tools roundtrip (SDK message sent back)", tools_roundtrip)
    def tools_roundtrip_full_dump():
        m = [{"role": "user", "content": "Weather in Paris?"}]
        r = c.chat.completions.create(model=MODEL, messages=m, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48, temperature=0)
        msg = r.choices[0].message
        m.append(msg.model_dump())  # with None fields (annotations, audio, function_call, refusal...)
        for tc in msg.tool_calls or []:
            m.append({"role": "tool", "tool_call_id": tc.id, "content": "sunny"})
        r2 = c.chat.completions.create(model=MODEL, messages=m, max_tokens=8, temperature=0, tools=TOOLS)
        return r2.choices[0].finish_reason
    tr("tools roundtrip model_dump() incl. nulls", tools_roundtrip_full_dump)
    def chat_dump_back():
        m = list(U)
        r = c.chat.completions.create(model=MODEL, messages=m, max_tokens=8, temperature=0)
        m.append(r.choices[0].message.model_dump())
        m.append({"role": "user", "content": "And Spain?"})
        return c.chat.completions.create(model=MODEL, messages=m, max_tokens=8, temperature=0).choices[0].message.content
    tr("assistant message model_dump() sent back", chat_dump_back)
    tr("completions.create", lambda: c.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=8, temperature=0).choices[0].text)
    tr("completions.create logprobs", lambda: c.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=2, temperature=0, logprobs=1).choices[0].logprobs.model_dump())
    tr("completions.create extra_body vLLM fields", lambda: c.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=8, temperature=0, extra_body={"top_k": 1, "min_tokens": 2, "repetition_penalty": 1.0}).choices[0].text)
    tr("responses.create", lambda: c.responses.create(model=MODEL, input="What is the capital of France?", max_output_tokens=12, temperature=0).output_text)
    def resp_stream():
        ev = []
        with c.responses.stream(model=MODEL, input="What is the capital of France?", max_output_tokens=12, temperature=0) as st:
            for e in st:
                ev.append(e.type)
            return st.get_final_response().output_text, sorted(set(ev))
    tr("responses.stream helper", resp_stream)
    tr("responses.parse", lambda: str(c.responses.parse(model=MODEL, input="What is the capital of France?", max_output_tokens=24, temperature=0, text_format=City).output_parsed))
    tr("embeddings.create", lambda: len(c.embeddings.create(model=MODEL, input="hi").data[0].embedding))
    tr("chat.create n=2 logprobs", lambda: [len(ch.logprobs.content) for ch in c.chat.completions.create(model=MODEL, messages=U, max_tokens=3, temperature=0.5, seed=1, n=2, logprobs=True, top_logprobs=1).choices])
    return out

res = {s: run(s) for s in ("vllm", "rose")}
for k in res["vllm"]:
    a, b = res["vllm"][k], res["rose"][k]
    print(f"=== [{'SAME' if a == b else 'DIFF'}] {k}\n   vllm: {json.dumps(a, default=str)[:500]}\n   rose: {json.dumps(b, default=str)[:500]}")
