import httpx, time, re
c = httpx.Client(base_url="http://127.0.0.1:18401", timeout=30)
def running():
    m = c.get("/metrics").text
    return re.findall(r"^roseinfer_num_requests_(?:running|waiting) .*$", m, re.M)
for stream in (True, False):
    body = {"prompt": "x", "max_tokens": 2000, "ignore_eos": True, "stream": stream, "n": 4}
    try:
        with c.stream("POST", "/v1/completions", json=body, timeout=1.0) as r:
            for i, line in enumerate(r.iter_lines()):
                if i > 3: break
    except httpx.ReadTimeout:
        pass
    time.sleep(0.5)
    print("stream" if stream else "nonstream", "after disconnect:", running())
    time.sleep(1.0)
    print("   1.5s later:", running())
