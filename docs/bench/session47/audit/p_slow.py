import json, time, threading, httpx, socket, sys
from harness import *
mode = sys.argv[1]; extra = json.loads(sys.argv[2])
body = {"prompt": "Hi", "max_tokens": 1900, "stream": True, "ignore_eos": True, "n": 32, **extra}
with Victim() as v:
    time.sleep(2); t0 = time.monotonic()
    if mode == "slow":
        raw = json.dumps(body).encode()
        s = socket.create_connection(("127.0.0.1", 18101)); 
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(raw) + raw)
        time.sleep(40); s.close()
    else:
        with httpx.stream("POST", BASE + "/v1/completions", json=body, timeout=120) as r:
            n = sum(1 for _ in r.iter_lines())
        print("fast reader lines", n, "took", time.monotonic() - t0)
    time.sleep(2)
print(mode, extra, summary([x for x in v.samples if x[0] >= t0]))
print([(round(a - t0, 1), round(b, 2)) for a, b, c in v.samples if b > 0.5])
