from h import *
U = [{"role": "user", "content": "Say something."}]
for g in [r'root ::= "caf" "\u00e9"', r'root ::= [\u00e0-\u00ff]{3}', r'root ::= "\u0100"', r'root ::= "\U0001F600"', r'root ::= "\u4e2d"', 'root ::= "café"']:
    s, j = post({"messages": U, "max_tokens": 8, "grammar": g})
    print(s, repr(g), "->", repr(j["choices"][0]["message"]["content"]) if s == 200 else j["error"]["message"].splitlines()[0][:120])
