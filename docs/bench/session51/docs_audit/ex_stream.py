import sys
from openai import OpenAI
port = sys.argv[1] if len(sys.argv) > 1 else "18500"
client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused")
stream = client.chat.completions.create(
    model="SmolLM2-135M-Instruct",
    messages=[{"role": "user", "content": "Write a haiku about the sea."}],
    max_tokens=48,
    stream=True,
)
for chunk in stream:
    print(chunk.choices[0].delta.content or "", end="", flush=True)
print()
weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
resp = client.chat.completions.create(
    model="SmolLM2-135M-Instruct", tools=[weather], tool_choice="required",
    messages=[{"role": "user", "content": "What's the weather in Paris?"}],
)
print(resp.choices[0].message.tool_calls)
print(resp.choices[0].finish_reason, resp.usage)
