import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
r = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=3, temperature=0,
                       include=["message.output_text.logprobs"], top_logprobs=2)
print(r.output[0].content[0].logprobs[0])
s = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=3, temperature=0,
                       include=["message.output_text.logprobs"], top_logprobs=2, stream=True)
for e in s:
    if e.type == "response.output_text.delta": print("delta lp:", e.logprobs[:1]); break
