import time, openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
r = c.responses.create(model=M, input="Write a long story about a cat", max_output_tokens=200, temperature=0, background=True)
print("POST:", r.status, r.background)
for _ in range(50):
    g = c.responses.retrieve(r.id)
    if g.status not in ("queued", "in_progress"): break
    time.sleep(0.2)
print("poll end:", g.status, len(g.output_text), g.usage.output_tokens if g.usage else None)
# streamed background, then cancel, then resume stream
s = c.responses.create(model=M, input="Write a long story about a dog", max_output_tokens=300, temperature=0, background=True, stream=True)
rid = None; last = -1
for e in s:
    if e.type == "response.created": rid = e.response.id
    last = e.sequence_number
    if e.type == "response.output_text.delta" and e.sequence_number > 10: break
s.close()
print("broke at", last, "id", rid)
resumed = c.responses.retrieve(rid, stream=True, starting_after=last)
nums = []
for e in resumed:
    nums.append(e.sequence_number)
    if len(nums) == 3: break
resumed.close()
print("resumed seq:", nums)
cx = c.responses.cancel(rid)
print("cancel:", cx.status, [o.status for o in cx.output])
print("cancel again:", c.responses.cancel(rid).status)
try:
    c.responses.cancel(r.id)
except openai.BadRequestError as e:
    print("cancel completed ->", e.status_code, e.body)
print("delete:", c.responses.delete(rid))
try: c.responses.retrieve(rid)
except openai.NotFoundError as e: print("after delete 404", e.body)
