# text.format.description: OpenAI shows it to the model ("used by the model to determine how to respond in the
# format"); here it changes nothing (same greedy output with or without it), yet the field table calls it honoured.
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"], "additionalProperties": False}
outs = []
for desc in (None, "The word must be the French word for cat, in upper case."):
    fmt = {"type": "json_schema", "name": "w", "schema": schema, "strict": True, **({"description": desc} if desc else {})}
    r = c.responses.create(model="SmolLM2-135M-Instruct", input="Give me a word.", text={"format": fmt}, max_output_tokens=20, temperature=0)
    outs.append(r.output_text)
print(outs, "identical:", outs[0] == outs[1])
