# Conversation whose oldest-read boundary falls on a huge function_call_output: with truncation "disabled" the
# response silently drops the earlier items (the user's question, the call, its output) instead of a 400.
# Run against the 512-token server (port 18102): --max-model-len 512.
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18102/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
conv = c.conversations.create(items=[
    {"role": "user", "content": "My name is Zanzibar. Look up the file."},
    {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
])
big = "data " * 60000   # 300,000 characters: more than 512 tokens x the longest token's characters
c.conversations.items.create(conv.id, items=[{"type": "function_call_output", "call_id": "call_1", "output": big}])
c.conversations.items.create(conv.id, items=[{"role": "user", "content": "What is my name?"}])
n_items = len(list(c.conversations.items.list(conv.id, limit=100)))
try:
    r = c.responses.create(model=M, conversation=conv.id, input="Answer briefly.", max_output_tokens=5,
                           temperature=0, truncation="disabled")
    print(f"conversation, truncation=disabled -> 200 status={r.status} input_tokens={r.usage.input_tokens}"
          f" (the conversation holds {n_items} items, ~300k characters)")
except openai.APIStatusError as e:
    print("conversation, truncation=disabled ->", e.status_code, e.body.get("code"))
inp = [{"role": "user", "content": "My name is Zanzibar. Look up the file."},
       {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
       {"type": "function_call_output", "call_id": "call_1", "output": big},
       {"role": "user", "content": "What is my name?"}, {"role": "user", "content": "Answer briefly."}]
try:
    r = c.responses.create(model=M, input=inp, max_output_tokens=5, temperature=0, store=False)
    print("same items sent as input -> 200", r.usage.input_tokens)
except openai.APIStatusError as e:
    print("same items sent as input ->", e.status_code, e.body.get("code"))
