from roseinfer import LLM, SamplingParams

llm = LLM()  # the embedded SmolLM2-135M-Instruct; LLM(model="/path/to/hf_dir_or.gguf", dtype="float32", ...)
outs = llm.generate(["The capital of France is", "def fib(n):"], SamplingParams(max_tokens=32, temperature=0))
for out in outs:
    print(out.finish_reason, repr(out.text))  # out.outputs[i].text / .token_ids for each of n choices
print(llm.chat([{"role": "user", "content": "Hi!"}], SamplingParams(max_tokens=32, n=2, seed=7))[0].outputs[1].text)
