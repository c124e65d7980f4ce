import json, os, sys, httpx
from openai import OpenAI
PORT = int(os.environ.get("PORT", "18320"))
BASE = f"http://127.0.0.1:{PORT}"
client = OpenAI(base_url=BASE + "/v1", api_key="x", timeout=120, max_retries=0)
M = client.models.list().data[0].id
def post(path, body, timeout=120):
    r = httpx.post(BASE + path, json=body, timeout=timeout)
    return r
def sse(path, body, timeout=120):
    """return list of raw data payloads (strings)"""
    out = []
    with httpx.stream("POST", BASE + path, json=body, timeout=timeout) as r:
        if r.status_code != 200:
            r.read(); return r.status_code, r.text
        buf = ""
        for line in r.iter_lines():
            out.append(line)
    return 200, out
def show(title, x):
    print("==", title)
    if isinstance(x, (dict, list)): print(json.dumps(x, indent=None, default=repr)[:3000])
    else: print(str(x)[:3000])
    sys.stdout.flush()
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "description": "Get the local time in a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
