import json, time, threading, httpx, socket, os
from harness import *
from p_mid import PROMPTS, valid, run, solo
pid = int(open("server.pid").read())
def rss(): return int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
# 1) disconnect mid-stream while 6 valid run
res = {}
def go(p): res[p] = run(valid(p))
def disconnector():
    with httpx.stream("POST", BASE + "/v1/completions", json={"prompt": "Hi", "max_tokens": 200, "stream": True, "ignore_eos": True, "n": 4}, timeout=30) as r:
        for i, line in enumerate(r.iter_lines()):
            if i >= 3: break
    res["disc"] = "closed after 3 lines"
ths = [threading.Thread(target=go, args=(p,)) for p in PROMPTS] + [threading.Thread(target=disconnector)]
for t in ths: t.start()
for t in ths: t.join(60)
print("disconnect: mismatches", [p for p in PROMPTS if res.get(p) != solo[p]], res.get("disc"))
time.sleep(1); print("metrics running:", [l for l in httpx.get(BASE + "/metrics").text.splitlines() if "running" in l and not l.startswith("#")][:3])
# 2) slow reader: raw socket, send request, never read
body = json.dumps({"prompt": "Hi", "max_tokens": 1900, "stream": True, "ignore_eos": True, "n": 32, "logprobs": 5}).encode()
s = socket.create_connection(("127.0.0.1", 18101)); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
print("rss before", rss())
with Victim() as v:
    for k in range(6):
        time.sleep(5); print(f"t={5*(k+1)}s rss={rss()}MB", summary(v.samples[-10:]), flush=True)
res = {}
ths = [threading.Thread(target=go, args=(p,)) for p in PROMPTS]
for t in ths: t.start()
for t in ths: t.join(60)
print("during slow reader: mismatches", [p for p in PROMPTS if res.get(p) != solo[p]])
s.close(); time.sleep(2); print("rss after close", rss())
