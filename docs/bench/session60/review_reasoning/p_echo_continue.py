# continue_final_message / echo with the reasoning parser: the prefilled assistant text that
# opened <think> is in the prompt; where does it and the continuation go?
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
for name in URL:
    with client(name) as h:
        for prefill, echo in (("<think>plan", False), ("<think>plan", True), ("<think>plan</think>Ans", True), ("Ans", True)):
            msgs = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": prefill}]
            body = base(h, 9, messages=msgs, continue_final_message=True, add_generation_prompt=False, echo=echo)
            ref = h.post("/v1/chat/completions", json={**body, "reasoning_format": "none"})
            ns = h.post("/v1/chat/completions", json=body)
            st = h.post("/v1/chat/completions", json={**body, "stream": True})
            if ns.status_code != 200:
                print(name, repr(prefill), "echo", echo, "->", ns.status_code, ns.text[:300]); continue
            m = ns.json()["choices"][0]["message"]; j = join_chat(sse(st.text))
            print(name, repr(prefill), "echo", echo, "| unparsed:", repr(ref.json()["choices"][0]["message"]["content"]))
            print("    non-stream reasoning=%r content=%r" % (m.get("reasoning"), m["content"]))
            print("    stream     reasoning=%r content=%r" % (j.get("reasoning"), j.get("content")))
