from h import *
s,j = comp({"prompt":"The capital of France is","max_tokens":3,"post_sampling_probs":True,"seed":1}); show("post no logprobs", [s, j["choices"][0] if s==200 else j])
s,j = comp({"prompt":"The capital of France is","max_tokens":3,"logprobs":3,"post_sampling_probs":True,"seed":1,"logit_bias":{"4649":100}}); show("post bias France", j["choices"][0]["logprobs"] if s==200 else j)
s,j = comp({"prompt":"Answer:","max_tokens":3,"logprobs":3,"post_sampling_probs":True,"seed":1,"guided_choice":["yes","no"]}); show("post grammar", j["choices"][0]["logprobs"] if s==200 else j)
s,j = comp({"prompt":"Answer:","max_tokens":3,"logprobs":3,"seed":1,"guided_choice":["yes","no"]}); show("raw grammar", j["choices"][0]["logprobs"] if s==200 else j)
s,j = comp({"prompt":"Answer:","max_tokens":3,"logprobs":3,"post_sampling_probs":True,"seed":1,"presence_penalty":2,"prompt_logprobs":1}); show("post prompt_logprobs", j["choices"][0].get("prompt_logprobs") if s==200 else j)
s,j = comp({"prompt":"Answer:","max_tokens":3,"logprobs":3,"post_sampling_probs":True,"temperature":0,"echo":True}); show("post greedy echo", j["choices"][0]["logprobs"] if s==200 else j)
