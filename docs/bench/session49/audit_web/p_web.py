"""Drive the chat page in Chromium against the server on 18201; record request bodies."""
import json, time, sys, httpx
from playwright.sync_api import sync_playwright
B = "http://127.0.0.1:18201"
T0 = time.monotonic()

def metric(name):
    for l in httpx.get(B + "/metrics").text.splitlines():
        if l.startswith(name): return l
with sync_playwright() as p:
    br = p.chromium.launch(executable_path="/usr/bin/chromium")
    ctx = br.new_context(); ctx.set_default_timeout(30000)
    page = ctx.new_page()
    bodies, dialogs = [], []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data)) if r.url.endswith("/v1/chat/completions") else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: print("   console:", m.type, m.text[:200]))
    # make the real request long: ignore_eos + many tokens (only for the tests that set window.longMode)
    def long_route(route):
        b = json.loads(route.request.post_data)
        if page.evaluate("window.longMode === true"):
            b.update(ignore_eos=True, max_tokens=1900)
        route.continue_(post_data=json.dumps(b))
    page.route("**/v1/chat/completions", long_route)
    page.goto(B + "/")
    page.wait_for_selector("body[data-state=ready]")
    page.wait_for_function("document.getElementById('model').textContent.length > 0")
    print("model shown:", page.text_content("#model"))

    def send(text):
        page.fill("#input", text); page.press("#input", "Enter")
        page.wait_for_selector("body[data-state=busy]", timeout=5000) if False else None
    def wait_ready():
        page.wait_for_function("document.body.dataset.state === 'ready'")

    # 1. settings act on the request
    page.click("#settings summary")
    page.fill("#system", "SYS"); page.fill("#temperature", "0.3"); page.fill("#top-p", "0.5"); page.fill("#max-tokens", "5")
    send("first <img src=x onerror=alert(1)>"); time.sleep(0.3); wait_ready()
    print("1. body:", json.dumps(bodies[-1]))
    print("   user box innerHTML:", page.locator(".message.user .content").last.inner_html())
    send("second"); time.sleep(0.3); wait_ready()
    print("2. multi-turn body messages:", json.dumps(bodies[-1]["messages"]))
    page.fill("#max-tokens", "0")
    send("fourth"); time.sleep(0.3); wait_ready()
    print("4. max_tokens 0 -> status shown:", repr(page.text_content("#status")), "input back:", repr(page.input_value("#input")))
    page.fill("#input", "")
    page.fill("#max-tokens", "5")
    # 5. New chat during a streaming answer
    page.click("#new-chat")
    print("   after new chat, last request messages count was", len(bodies[-1]["messages"]))
    page.evaluate("window.longMode = true")
    send("OLD TOPIC")
    page.wait_for_function("document.querySelector('.message.assistant .content')?.textContent.length > 20")
    print("5. running before New chat:", metric("roseinfer_num_requests_running"))
    page.click("#new-chat")
    wait_ready()
    page.evaluate("window.longMode = false")
    time.sleep(0.5)
    print("   messages on screen after New chat:", page.locator(".message").count())
    send("NEW TOPIC"); time.sleep(0.3); wait_ready()
    print("   next body messages:", json.dumps([{"role": m["role"], "content": m["content"][:40]} for m in bodies[-1]["messages"]]))
    # 6. Stop aborts
    page.click("#new-chat")
    page.evaluate("window.longMode = true")
    ab0 = metric('roseinfer_requests_finished_total{finished_reason="abort"}')
    send("story")
    page.wait_for_function("document.querySelector('.message.assistant .content')?.textContent.length > 20")
    page.click("#stop"); wait_ready()
    page.evaluate("window.longMode = false")
    time.sleep(1.0)
    print("6. stats:", page.locator(".message.assistant .stats").last.text_content(),
          "| running:", metric("roseinfer_num_requests_running"), "| abort before/after:", ab0, "/", metric('roseinfer_requests_finished_total{finished_reason="abort"}'))
    # 7. XSS via model output: fulfil a fake SSE stream whose content is HTML
    page.click("#new-chat")
    page.unroute("**/v1/chat/completions")
    evil = '<img src=x onerror=alert(1)><script>alert(2)</script>**bold** [l](javascript:alert(3))'
    sse = "".join(f"data: {json.dumps(c)}\n\n" for c in [
        {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":None}]},
        {"choices":[{"index":0,"delta":{"content":evil},"finish_reason":None}]},
        {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]},
        {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}]) + "data: [DONE]\n\n"
    page.route("**/v1/chat/completions", lambda r: r.fulfill(status=200, headers={"content-type":"text/event-stream"}, body=sse))
    send("x"); time.sleep(0.5); wait_ready()
    print("7. assistant innerHTML:", page.locator(".message.assistant .content").last.inner_html()[:200])
    print("   img elements in #messages:", page.locator("#messages img").count(), "dialogs:", dialogs)
    # 8. server error mid-stream (error chunk) and non-JSON 500
    page.unroute("**/v1/chat/completions")
    sse_err = 'data: {"choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}\n\ndata: {"error":{"message":"engine failed <b>x</b>","type":"server_error"}}\n\n'
    page.route("**/v1/chat/completions", lambda r: r.fulfill(status=200, headers={"content-type":"text/event-stream"}, body=sse_err))
    send("y"); time.sleep(0.5); wait_ready()
    print("8. mid-stream error status:", repr(page.text_content("#status")), "status innerHTML:", page.inner_html("#status"))
    page.unroute("**/v1/chat/completions")
    page.route("**/v1/chat/completions", lambda r: r.fulfill(status=502, headers={"content-type":"text/html"}, body="<h1>Bad gateway</h1>"))
    page.fill("#input", ""); send("z"); time.sleep(0.5); wait_ready()
    print("   502 html status:", repr(page.text_content("#status")))
    ctx.close(); br.close()
print("elapsed", round(time.monotonic() - T0, 1))
