# auto tool_choice (here beside response_format): a call answer's content is null non-streamed, "" streamed
from h import *
W=[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
RF={"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":False},"strict":True}}
b={"messages":[{"role":"user","content":"What is the weather in Paris?"}],"tools":W,"response_format":RF,"temperature":0,"max_tokens":60,"parallel_tool_calls":False}
s,j=chat(dict(b)); m=j["choices"][0]["message"]; print("non-stream content", repr(m["content"]), "calls", len(m.get("tool_calls") or []), "keys", sorted(m))
from openai import OpenAI
c=OpenAI(base_url=B+"/v1", api_key="x")
with c.chat.completions.stream(model="SmolLM2-135M-Instruct", **{k:v for k,v in b.items() if k!="response_format"}, response_format=RF) as st:
    f=st.get_final_completion()
print("SDK stream final content", repr(f.choices[0].message.content), "calls", len(f.choices[0].message.tool_calls or []))
