import openai, pydantic
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
with c.responses.stream(model="SmolLM2-135M-Instruct", input="Say hi in three words", max_output_tokens=64, temperature=0) as st:
    kinds = [e.type for e in st]
    final = st.get_final_response()
print(kinds[-1], final.status, repr(final.output_text), final.completed_at)
class City(pydantic.BaseModel):
    name: str
    country: str
r = c.responses.parse(model="SmolLM2-135M-Instruct", input="Capital of France as JSON", text_format=City, max_output_tokens=64, temperature=0)
print(r.status, r.output_parsed, r.text.format)
with c.responses.stream(model="SmolLM2-135M-Instruct", input="Capital of France as JSON", text_format=City, max_output_tokens=64, temperature=0) as st:
    for e in st: pass
    print("stream parse:", st.get_final_response().output_parsed)
