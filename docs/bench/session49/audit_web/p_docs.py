"""Can /docs (Swagger UI) send a chat request? Look for a request-body editor and an Authorize button."""
import json, time
from playwright.sync_api import sync_playwright
B = "http://127.0.0.1:18202"   # the server started with --api-key
with sync_playwright() as p:
    br = p.chromium.launch(executable_path="/usr/bin/chromium")
    page = br.new_page(); page.set_default_timeout(20000)
    sent = []
    page.on("request", lambda r: sent.append((r.method, r.url, r.post_data)) if "/v1/chat" in r.url else None)
    page.goto(B + "/docs")
    page.wait_for_selector("#operations-default-chat_completions_v1_chat_completions_post")
    print("Authorize button present:", page.locator("button.authorize").count())
    page.click("#operations-default-chat_completions_v1_chat_completions_post .opblock-summary")
    page.click("button.try-out__btn")
    print("request-body editors:", page.locator("#operations-default-chat_completions_v1_chat_completions_post textarea.body-param__text").count())
    page.click("button.execute")
    page.wait_for_selector("#operations-default-chat_completions_v1_chat_completions_post .responses-inner .response-col_status", timeout=20000)
    time.sleep(0.5)
    print("sent:", sent)
    print("response shown:", page.locator("#operations-default-chat_completions_v1_chat_completions_post .responses-inner").first.inner_text()[:400].replace("\n", " | "))
    br.close()
