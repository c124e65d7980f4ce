"""LLM.chat's vLLM arguments; LLM(seed=...); max_model_len; the seeds' InferenceSession."""
from roseinfer import LLM, SamplingParams
llm = LLM("smollm2", dtype="float32", max_model_len=64)
sp = SamplingParams(temperature=0, max_tokens=8)
msgs = [{"role": "user", "content": "Say hi"}]
def tryit(label, fn):
    try:
        r = fn()
        print("OK   ", label, "->", [(len(o.prompt_token_ids), o.text) for o in r] if isinstance(r, list) else r)
        return r
    except Exception as e:
        print("RAISE", label, "->", type(e).__name__, str(e)[:200])
a = tryit("chat", lambda: llm.chat(msgs, sp, use_tqdm=False))
tryit("chat(add_generation_prompt=False)", lambda: llm.chat(msgs, sp, use_tqdm=False, add_generation_prompt=False))
tryit("chat(continue_final_message=True) [add_generation_prompt default True]", lambda: llm.chat(msgs + [{"role": "assistant", "content": "Hello, my name"}], sp, use_tqdm=False, continue_final_message=True))
tryit("chat(continue_final_message=True, add_generation_prompt=False)", lambda: llm.chat(msgs + [{"role": "assistant", "content": "Hello, my name"}], sp, use_tqdm=False, continue_final_message=True, add_generation_prompt=False))
tryit("chat(chat_template=...)", lambda: llm.chat(msgs, sp, use_tqdm=False, chat_template="{{ messages[0].content }}"))
tryit("chat(chat_template_kwargs={'enable_thinking': False})", lambda: llm.chat(msgs, sp, use_tqdm=False, chat_template_kwargs={"enable_thinking": False}))
tryit("chat(chat_template_content_format='string')", lambda: llm.chat(msgs, sp, use_tqdm=False, chat_template_content_format="string"))
tryit("chat(mm_processor_kwargs={})", lambda: llm.chat(msgs, sp, use_tqdm=False, mm_processor_kwargs={}))
tryit("chat content parts", lambda: llm.chat([{"role": "user", "content": [{"type": "text", "text": "Say hi"}]}], sp, use_tqdm=False))
tryit("chat image part", lambda: llm.chat([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x"}}]}], sp, use_tqdm=False))
tryit("chat unknown key", lambda: llm.chat([{"role": "user", "content": "hi", "foo": 1}], sp, use_tqdm=False))
tryit("chat list of convs", lambda: llm.chat([msgs, msgs], sp, use_tqdm=False))
# max_model_len honoured
tryit("generate 70-token prompt, max_model_len=64", lambda: llm.generate([list(range(100, 170))], sp, use_tqdm=False))
r = tryit("prompt 60 + max_tokens 8 (> 64)", lambda: llm.generate([list(range(100, 160))], sp, use_tqdm=False))
# seed
def s(seed):
    l = LLM("smollm2", dtype="float32", seed=seed, max_model_len=64)
    return l.generate("Once upon a time", SamplingParams(temperature=1.0, max_tokens=8), use_tqdm=False)[0].text
x1, x2, y = s(1), s(1), s(2)
print("LLM(seed=1) twice same:", x1 == x2, "seed=2 differs:", x1 != y)
