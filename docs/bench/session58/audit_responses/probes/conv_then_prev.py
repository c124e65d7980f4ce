# a response made with `conversation`, then continued by previous_response_id: does the continuation see the conversation's earlier items?
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
conv = c.conversations.create(items=[{"role": "user", "content": "The secret word is PINEAPPLE-" + "x" * 200}, {"role": "assistant", "content": "Noted."}])
r1 = c.responses.create(model=M, conversation=conv.id, input="ok", max_output_tokens=3, temperature=0)
r2 = c.responses.create(model=M, previous_response_id=r1.id, input="What is the secret word?", max_output_tokens=3, temperature=0)
r2_conv = c.responses.input_tokens.count(model=M, conversation=conv.id, input="What is the secret word?")
print("r1 input_tokens (conversation + 'ok'):", r1.usage.input_tokens)
print("r2 via previous_response_id:", r2.usage.input_tokens, " same turn via conversation:", r2_conv.input_tokens)
