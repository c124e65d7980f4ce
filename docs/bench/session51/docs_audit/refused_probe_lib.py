import json
base = {"chat": ("/v1/chat/completions", {"messages":[{"role":"user","content":"hi"}], "max_tokens":2}),
        "completions": ("/v1/completions", {"prompt":"hi","max_tokens":2}),
        "generate": ("/generate", {"prompt":"hi","max_new_tokens":2})}
# non-neutral candidate values
def bad_values(name):
    return [True, 5, "x", ["x"], {"x": 1}, 0.5]
def setf(body, name, val):
    body = json.loads(json.dumps(body))
    if name.startswith("messages[]."):
        body["messages"][0][name.split(".",1)[1]] = val
    elif "." in name:
        a, b = name.split(".", 1)
        if a == "stream_options":
            body["stream"] = True
        body.setdefault(a, {})
        if a == "structured_outputs": body[a]["json_object"] = True
        body[a][b] = val
    else:
        body[name] = val
    return body
