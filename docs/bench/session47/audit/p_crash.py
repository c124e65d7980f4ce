import json
n = 3000
g = "start: r0\n" + "\n".join(f"r{i}: \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n}: \"end\"\n"
json.dump({"prompt": "Hi", "max_tokens": 8, "structured_outputs": {"grammar": g}}, open("crash_body.json", "w"))
