# stream vs non-stream output items for an answer with two calls (do they agree?)
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}]
kw = dict(model="SmolLM2-135M-Instruct", input="Weather in Paris and in Rome?", tools=tools, max_output_tokens=120, temperature=0)
for choice in ("required", "auto"):
    r = c.responses.create(**kw, tool_choice=choice)
    with c.responses.stream(**kw, tool_choice=choice) as s:
        for _ in s: pass
        f = s.get_final_response()
    show = lambda resp: [(o.type, getattr(o, "arguments", None) or (o.content[0].text if o.type == "message" else None)) for o in resp.output]
    print(choice, "non-stream:", show(r)); print(choice, "stream:    ", show(f))
