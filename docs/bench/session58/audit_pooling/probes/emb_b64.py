# base64 vs float: same values, float32 little-endian; endianness big; OpenAI SDK round trip
import base64, json, struct, urllib.request, sys
U = "http://127.0.0.1:18201"
def post(path, body):
    r = urllib.request.Request(U + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=60) as f: return f.status, json.load(f)
    except urllib.error.HTTPError as e: return e.code, json.load(e)
_, f = post("/v1/embeddings", {"input": "hello world"})
_, b = post("/v1/embeddings", {"input": "hello world", "encoding_format": "base64"})
_, bb = post("/v1/embeddings", {"input": "hello world", "encoding_format": "base64", "endianness": "big"})
fl = f["data"][0]["embedding"]
raw = base64.b64decode(b["data"][0]["embedding"])
le = struct.unpack(f"<{len(raw)//4}f", raw)
be = struct.unpack(f">{len(raw)//4}f", base64.b64decode(bb["data"][0]["embedding"]))
print("len", len(fl), len(le), "max|float-b64le|", max(abs(x - y) for x, y in zip(fl, le)), "max|le-be|", max(abs(x-y) for x,y in zip(le,be)))
try:
    import openai
    c = openai.OpenAI(base_url=U + "/v1", api_key="x")
    r = c.embeddings.create(model="SmolLM2-135M-Instruct", input=["hello world"])
    print("sdk", len(r.data[0].embedding), max(abs(x - y) for x, y in zip(fl, r.data[0].embedding)), r.usage)
except ImportError:
    print("no openai sdk")
