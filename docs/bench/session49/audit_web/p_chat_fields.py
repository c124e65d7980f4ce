import httpx, json
B = "http://127.0.0.1:18201"
c = httpx.Client(base_url=B, timeout=60)
U = [{"role":"user","content":"hi"}]
def t(label, body, ep="/tokenize"):
    r = c.post(ep, json=body)
    j = r.text
    print(f"== {label} [{ep}]: {r.status_code} {j[:260]}")
    return r
for ep in ("/tokenize", "/v1/chat/completions"):
    extra = {"max_tokens":1} if ep != "/tokenize" else {}
    t("image part", {"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:,"}}]}], **extra}, ep)
    t("input_audio part", {"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio","input_audio":{"data":"","format":"wav"}}]}], **extra}, ep)
    t("part without type", {"messages":[{"role":"user","content":[{"text":"a"}]}], **extra}, ep)
    t("part as string", {"messages":[{"role":"user","content":["a"]}], **extra}, ep)
    t("name (template ignores)", {"messages":[{"role":"user","content":"hi","name":"bob"}], **extra}, ep)
    t("name empty", {"messages":[{"role":"user","content":"hi","name":""}], **extra}, ep)
    t("chat_template", {"messages":U, "chat_template":"{{ 'X' }}", **extra}, ep)
    t("chat_template_kwargs unknown var", {"messages":U, "chat_template_kwargs":{"enable_thinking":False}, **extra}, ep)
    t("chat_template_kwargs reserved", {"messages":U, "chat_template_kwargs":{"add_generation_prompt":False}, **extra}, ep)
    t("documents", {"messages":U, "documents":[{"title":"a","text":"b"}], **extra}, ep)
    t("documents []", {"messages":U, "documents":[], **extra}, ep)
    t("role function", {"messages":[{"role":"function","content":"x","name":"f"}], **extra}, ep)
    t("role tool w/o call", {"messages":[{"role":"user","content":"x"},{"role":"tool","content":"r","tool_call_id":"c1"}], **extra}, ep)
    hist = [{"role":"user","content":"weather?"},
            {"role":"assistant","content":None,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"city\":\"Paris\"}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"sunny"}]
    r = t("tool history", {"messages":hist, **extra}, ep)
    if ep == "/tokenize" and r.status_code == 200:
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
        print("   rendered:", repr(tok.decode(r.json()["tokens"])))
    tools=[{"type":"function","function":{"name":"get","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]
    r = t("tools", {"messages":U, "tools":tools, **extra}, ep)
    t("content null user", {"messages":[{"role":"user","content":None}], **extra}, ep)
    t("reasoning_content", {"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","reasoning_content":"r"}], **extra}, ep)
    t("tool_calls index", {"messages":[{"role":"user","content":"w"},{"role":"assistant","content":None,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get","arguments":"{}"}}]}], **extra}, ep)
    t("tool_calls unknown key in call", {"messages":[{"role":"user","content":"w"},{"role":"assistant","content":None,"tool_calls":[{"zzz":0,"id":"c1","type":"function","function":{"name":"get","arguments":"{}"}}]}], **extra}, ep)
    t("tool_calls function unknown key", {"messages":[{"role":"user","content":"w"},{"role":"assistant","content":None,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{}","zzz":1}}]}], **extra}, ep)
    t("continue + gen prompt", {"messages":U, "continue_final_message":True, **extra}, ep)
    t("messages not list", {"messages":"hi", **extra}, ep)
    t("mm_processor_kwargs {}", {"messages":U, "mm_processor_kwargs":{}, **extra}, ep)
t("tokenize tools+tool_choice", {"messages":U, "tools":[], "tool_choice":"none"})
t("tokenize chat return_token_strs", {"messages":U, "return_token_strs":True})
