# instructions are not carried across previous_response_id (OpenAI's rule): compare prompt token counts
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
r1 = c.responses.create(model=M, instructions="ALWAYS ANSWER IN FRENCH PLEASE " * 5, input="hi", max_output_tokens=3, temperature=0)
r2 = c.responses.create(model=M, previous_response_id=r1.id, input="again", max_output_tokens=3, temperature=0)
manual = c.responses.create(model=M, input=[{"role": "user", "content": "hi"}, *r1.output, {"role": "user", "content": "again"}], max_output_tokens=3, temperature=0, store=False)
print("r1", r1.usage.input_tokens, "r2", r2.usage.input_tokens, "manual no-instructions", manual.usage.input_tokens)
print("instructions echoed on r2:", r2.instructions)
n = c.responses.input_tokens.count(model=M, previous_response_id=r1.id, input="again")
print("input_tokens.count:", n.input_tokens)
