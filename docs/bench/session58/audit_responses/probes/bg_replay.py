# a finished background+stream response: its events replayed from the store, after starting_after
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
s = c.responses.create(model="SmolLM2-135M-Instruct", input="hi", max_output_tokens=5, background=True, stream=True)
live = [(e.sequence_number, e.type) for e in s]
rid = None
s2 = c.responses.create(model="SmolLM2-135M-Instruct", input="hi", max_output_tokens=5, background=True, stream=True)
events = list(s2); rid = events[0].response.id
replay = [(e.sequence_number, e.type) for e in c.responses.retrieve(rid, stream=True, starting_after=3)]
print("live:", [t for _, t in live]); print("replay after 3:", replay[:2], "...", replay[-1], "count", len(replay), "of", len(events))
