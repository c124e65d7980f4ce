# The parsers read only the output, never the prompt: a prompt that already opened <think>
# (qwen3) or already closed it (deepseek_r1) is misread. Shown with continue_final_message
# (the same prompt ends as Qwen3-Thinking-2507's / Qwen3.5's generation prompt `<think>\n`, or
# a template's thinking-off `<think>\n\n</think>\n\n`).
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
for name, prefill in (("qwen3", "<think>\n"), ("deepseek_r1", "<think>\n\n</think>\n\n"), ("deepseek_r1", "<think>plan</think>Ans")):
    with client(name) as h:
        msgs = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": prefill}]
        body = base(h, 9, messages=msgs, continue_final_message=True, add_generation_prompt=False)
        prompt = h.post("/tokenize", json={"messages": msgs, "continue_final_message": True, "add_generation_prompt": False}).json()
        ref = h.post("/v1/chat/completions", json={**body, "reasoning_format": "none"}).json()["choices"][0]["message"]["content"]
        m = h.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
        print(f"{name}: prompt ends {prefill!r}; output {ref!r}")
        print(f"    got reasoning={m.get('reasoning')!r} content={m['content']!r}")
