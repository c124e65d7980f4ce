import sys
from roseinfer import LLM, SamplingParams
kw = dict(model="/tmp/s47/audit/tinysmol", dtype="float32") if sys.argv[1:] == ["tiny"] else {}
llm = LLM(**kw)
outs = llm.generate(["The capital of France is", "def fib(n):"], SamplingParams(max_tokens=32, temperature=0))
for out in outs:
    print(out.finish_reason, repr(out.text))
    print(" ", len(out.outputs), repr(out.outputs[0].text)[:60], out.outputs[0].token_ids[:5])
print(llm.chat([{"role": "user", "content": "Hi!"}], SamplingParams(max_tokens=32, n=2, seed=7))[0].outputs[1].text)
print("config.max_model_len", llm.config.max_model_len)
weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
params = SamplingParams(max_tokens=40)
tc = llm.chat([{"role": "user", "content": "What's the weather in Paris?"}], params, tools=[weather], tool_choice="required")[0].outputs[0].tool_calls
print("tool_calls", tc)
# SamplingParams checks
for bad in [dict(top_p=0), dict(seed=2**64), dict(top_k=2**31), dict(max_tokens=5, max_new_tokens=6), dict(temperature=-1)]:
    try:
        SamplingParams(**bad); print("ACCEPTED", bad)
    except ValueError as e:
        print("ValueError", bad, "->", e)
print(SamplingParams(max_new_tokens=7).max_tokens, SamplingParams().max_tokens)
from roseinfer.sampling_params import StructuredOutputs
o = llm.generate(["x"], SamplingParams(max_tokens=10, structured_outputs=StructuredOutputs(choice=["yes", "no"])))[0]
print("structured", o.outputs[0].text, o.outputs[0].finish_reason, o.outputs[0].stop_reason)
o = llm.generate(["x"], SamplingParams(max_tokens=3, logprobs=2, prompt_logprobs=1))[0]
print("logprobs", o.outputs[0].logprobs[0], o.outputs[0].cumulative_logprob, o.prompt_logprobs)
try:
    list(llm.stream(llm.encode("x"), SamplingParams(max_tokens=2, n=2)))
except ValueError as e: print("stream n=2:", e)
from roseinfer.outputs import RequestFailed
print("RequestFailed ok")
