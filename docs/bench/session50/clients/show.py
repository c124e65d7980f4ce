import json, sys
for l in open("/tmp/s50/clients/logs/http.jsonl"):
    d=json.loads(l)
    if any(d["tag"].startswith(p) for p in sys.argv[1:]) or not sys.argv[1:]:
        print("==", d["tag"], d["status"], d["url"]); print(json.dumps(d["req"])[:3000]); print("->", d.get("resp","")[:1500])
