from h import *
def render(**kw):
    s, j, _ = post("/tokenize", kw)
    if s != 200: return s, j
    s2, d, _ = post("/detokenize", {"tokens": j["tokens"]})
    return d["prompt"]
U = {"role": "user", "content": "hi"}
print(repr(render(messages=[U, {"role": "assistant", "content": "Sure, the"}], add_generation_prompt=False, continue_final_message=True)))
print(repr(render(messages=[U, {"role": "assistant", "content": "Sure, the"}], add_generation_prompt=False)))
print(repr(render(messages=[U, {"role": "assistant", "content": "Sure, the"}])))
print(repr(render(messages=[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])))
print(repr(render(messages=[{"role": "developer", "content": "dev"}, U])))
print(repr(render(messages=[U, {"role": "system", "content": "late system"}, U])))
tc = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}
print(repr(render(messages=[U, {"role": "assistant", "content": None, "tool_calls": [tc]}, {"role": "tool", "tool_call_id": "call_1", "content": "42"}])))
f = {"type": "function", "function": {"name": "get", "description": "DESCRIPTION_HERE", "parameters": {"type": "object", "properties": {"x": {"type": "integer", "description": "PARAMDESC"}}}, "strict": False}}
r = render(messages=[U], tools=[f]); print(repr(r[:1500]))
# continue_final_message with a trailing-whitespace content
print(repr(render(messages=[U, {"role": "assistant", "content": "Sure "}], add_generation_prompt=False, continue_final_message=True)))
# continue_final_message where the final message is a user message with content parts
print(repr(render(messages=[{"role": "user", "content": [{"type": "text", "text": "a"}]}], add_generation_prompt=False, continue_final_message=True)))
# continue_final_message with content identical to an earlier message
print(repr(render(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}], add_generation_prompt=False, continue_final_message=True)))
print(repr(render(messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": ""}], add_generation_prompt=False, continue_final_message=True)))
