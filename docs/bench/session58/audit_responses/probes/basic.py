import json, openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
r = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=8, temperature=0)
print(json.dumps(r.model_dump(), indent=1))
print("output_text:", r.output_text)
