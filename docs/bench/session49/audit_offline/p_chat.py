from common import *
from roseinfer import SamplingParams
L = llm()
msgs = [{"role": "user", "content": "Hi"}]
sp = SamplingParams(temperature=0, max_tokens=5)
def ids_of(r): return r[0].prompt_token_ids
t = L.tokenizer
a = L.chat(msgs, sp, use_tqdm=False)
print("default prompt tail:", repr(t.decode(ids_of(a)[-6:])))
b = L.chat(msgs, sp, use_tqdm=False, add_generation_prompt=False)
print("agp=False tail:", repr(t.decode(ids_of(b)[-6:])))
trial("continue_final_message alone", lambda: L.chat(msgs+[{"role":"assistant","content":"Hel"}], sp, use_tqdm=False, continue_final_message=True))
c = L.chat(msgs+[{"role":"assistant","content":"Hel"}], sp, use_tqdm=False, continue_final_message=True, add_generation_prompt=False)
print("continue tail:", repr(t.decode(ids_of(c)[-4:])))
trial("chat_template_kwargs unknown", lambda: L.chat(msgs, sp, use_tqdm=False, chat_template_kwargs={"enable_thinking": False}))
trial("chat_template_kwargs reserved", lambda: L.chat(msgs, sp, use_tqdm=False, chat_template_kwargs={"tools": []}))
trial("name dropped", lambda: L.chat([{"role":"user","content":"Hi","name":"bob"}], sp, use_tqdm=False))
trial("unknown key", lambda: L.chat([{"role":"user","content":"Hi","foo":1}], sp, use_tqdm=False))
trial("bad conv in batch", lambda: L.chat([msgs, [{"role":"wizard","content":"x"}]], sp, use_tqdm=False))
tools=[{"type":"function","function":{"name":"get_w","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
r = L.chat(msgs, SamplingParams(temperature=1.0, seed=0, max_tokens=60), use_tqdm=False, tools=tools, tool_choice="required")
o=r[0].outputs[0]; print("tools required:", o.finish_reason, o.tool_calls, repr(o.text)[:80])
r = L.chat(msgs, SamplingParams(temperature=1.0, seed=0, max_tokens=60), use_tqdm=False, tools=tools, tool_choice={"type":"function","function":{"name":"get_w"}})
o=r[0].outputs[0]; print("tools named:", o.finish_reason, o.tool_calls)
trial("named unknown fn", lambda: L.chat(msgs, sp, use_tqdm=False, tools=tools, tool_choice={"type":"function","function":{"name":"nope"}}))
trial("parallel_tool_calls no tools", lambda: L.chat(msgs, sp, use_tqdm=False, parallel_tool_calls=False)[0].outputs[0].text)
trial("tool_choice none + parallel False", lambda: L.chat(msgs, sp, use_tqdm=False, tools=tools, tool_choice="none", parallel_tool_calls=False)[0].outputs[0].text)
# tools shown to template?
p1 = L.chat(msgs, sp, use_tqdm=False, tools=tools, tool_choice="none")[0].prompt_token_ids
print("tools shown with none:", len(p1) > len(ids_of(a)))
# generate: batch with one bad prompt
trial("generate bad prompt in batch", lambda: L.generate(["ok", ""], sp, use_tqdm=False))
trial("generate bad id in batch", lambda: L.generate([[1,2],[10**6]], sp, use_tqdm=False))
trial("generate prompts=[]", lambda: L.generate([], sp, use_tqdm=False))
trial("chat messages=[]", lambda: L.chat([], sp, use_tqdm=False))
trial("generate token ids list", lambda: [o.outputs[0].token_ids for o in L.generate([1,2,3], sp, use_tqdm=False)])
