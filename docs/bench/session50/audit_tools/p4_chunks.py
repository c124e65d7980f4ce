from h import *
import sys
def ac(i, city): return {"role":"assistant","content":None,"tool_calls":[{"id":f"c{i}","type":"function","function":{"name":"get_weather","arguments":json.dumps({"city":city})}}]}
M = [{"role":"user","content":"Weather in Paris?"}, ac(1,"Paris"),
     {"role":"user","content":"Weather in Rome?"}, ac(2,"Rome"),
     {"role":"user","content":"Weather in Berlin?"}]
extra = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
s, ch = stream({"messages": M, "tools": [W, T], "max_tokens": 60, **extra})
for c in ch: print(json.dumps(c["choices"]) if c["choices"] else json.dumps(c))
