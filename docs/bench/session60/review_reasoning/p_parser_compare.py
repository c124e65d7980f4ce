# roseinfer's two parsers vs (re-implemented, non-streaming) vLLM main's deepseek_r1
# (BaseThinkingReasoningParser.extract_reasoning) and qwen3 (Qwen3ReasoningParser.extract_reasoning,
# enable_thinking default True), and llama.cpp's try_parse_reasoning (reasoning_format deepseek,
# thinking_forced_open False / True as the prompt decides). Simplified from their sources.
import sys, re; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import parse
S, E = "<think>", "</think>"
def vllm_r1(t):
    a, s, b = t.partition(S); t = b if s else a
    if E not in t: return t, None
    r, _, c = t.partition(E); return r, c or None
def vllm_qwen3(t, enable_thinking=True):
    a, s, b = t.partition(S); t = b if s else a
    if E in t:
        r, _, c = t.partition(E); return r, c or None
    if not enable_thinking: return None, t
    i = t.find("<tool_call>")
    if i >= 0 and re.match(r"<function[\s=]", t[i + 11:].lstrip()): return t[:i] or None, t[i:] or None
    return t, None
def llama(t, forced_open):
    content, reasoning = "", ""
    ws = len(t) - len(t.lstrip())
    if ws == len(t):
        return ((t.strip() or None) if forced_open else None), (None if forced_open else t or None)
    cur = ws
    if t.startswith(S, cur):
        content += t[:ws]; cur += len(S)
    elif not forced_open:
        return None, t or None
    while True:
        e = t.find(E, cur)
        if e < 0:
            reasoning += t[cur:].strip(); cur = len(t); break
        reasoning += t[cur:e].strip(); cur = e + len(E)
        while cur < len(t) and t[cur].isspace(): cur += 1
        if t.startswith(S, cur): cur += len(S); continue
        break
    content += t[cur:]
    return reasoning or None, content or None
def rose(name, t):
    r, a = parse(name, t); return r, a or None
cases = ["<think>\nplan\n</think>\n\nAnswer", "\nplan\n</think>\n\nAnswer", "plain answer",
         "<think>\ncut off", "  <think>x</think>y", "pre<think>x</think>y",
         "<think>a</think>\n<think>b</think>c", "<think>\n\n</think>\n\nAnswer",
         "<think>x</think>", "plan <tool_call>\n<function=f>\n</function>\n</tool_call>",
         "<think>\nI should call <tool_call>\n<function=f>\n</function>\n</tool_call>"]
rows = [("roseinfer deepseek_r1", lambda t: rose("deepseek_r1", t)), ("vLLM deepseek_r1", vllm_r1),
        ("llama.cpp forced_open (R1 prompt)", lambda t: llama(t, True)),
        ("roseinfer qwen3", lambda t: rose("qwen3", t)), ("vLLM qwen3 (enable_thinking)", vllm_qwen3),
        ("vLLM qwen3 (enable_thinking=False)", lambda t: vllm_qwen3(t, False)),
        ("llama.cpp not forced (Qwen3 prompt)", lambda t: llama(t, False))]
for t in cases:
    print(f"\nOUTPUT {t!r}")
    for label, f in rows:
        r, c = f(t); print(f"   {label:38s} reasoning={r!r:28s} content={c!r}")
