import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
conv = c.conversations.create(metadata={"topic": "t"}, items=[
    {"type": "message", "role": "system", "content": "You are terse."},
    {"type": "message", "role": "user", "content": "My name is Ada."},
    {"type": "message", "role": "assistant", "content": "Hello Ada."}])
print(conv)
items = c.conversations.items.list(conv.id)
print("default order:", [(i.type, i.role, i.content[0].text) for i in items.data], items.has_more)
r = c.responses.create(model="SmolLM2-135M-Instruct", conversation=conv.id, input="What is my name?", max_output_tokens=20, temperature=0, instructions="Be nice")
print("resp:", r.status, repr(r.output_text), r.conversation)
allitems = list(c.conversations.items.list(conv.id, order="asc", limit=2))  # auto-paging
print("asc auto-paged:", [(i.type, getattr(i, "role", None), i.id[:8]) for i in allitems])
print("resp input_items:", [(i.type, i.role, i.id[:12]) for i in c.responses.input_items.list(r.id)])
out_ids = [o.id for o in r.output]
print("output ids in conv?", [oid in [i.id for i in allitems] for oid in out_ids])
added = c.conversations.items.create(conv.id, items=[{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}])
print("added:", added.data[0].id, added.first_id)
got = c.conversations.items.retrieve(added.data[0].id, conversation_id=conv.id)
print("retrieved:", got.type, got.id == added.data[0].id)
d = c.conversations.items.delete(added.data[0].id, conversation_id=conv.id)
print("item delete ->", type(d).__name__, d.id)
print(c.conversations.update(conv.id, metadata={"a": "b"}))
print(c.conversations.delete(conv.id))
