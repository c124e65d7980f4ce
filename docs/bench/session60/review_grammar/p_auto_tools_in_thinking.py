"""tools under "auto" (no response_format) are `free_start`: the server leaves their grammar
uncomposed (no thinking_first), so the lazy `<tool_call>` trigger also fires inside the
thinking. A model that mentions the tag while thinking is then forced to write a whole call
there, which the reasoning parser files as reasoning: no tool_calls come back."""
from common import *
from roseinfer.structured.tools import Tool, ToolUse
from roseinfer.output.reasoning import ReasoningParser
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>", "<tool_call>", "</tool_call>"])
tok, comp = compiler_for(hf); V = len(hf)
use = ToolUse((Tool("add", None, {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),), "auto")
spec = StructuredOutputs(grammar=use.grammar())   # what sampling_requests leaves it (free_start)
m = comp.matcher(spec)
text = "<think>I could write <tool_call>"
print("consume", repr(text), m.consume_tokens(tok.encode(text, False)))
close = tok.encode("</think>", False)[0]
nl = tok.encode("\n", False)[0]
print("now </think> allowed:", allowed(m, close, V), "| only '\\n' (the call's JSON next) allowed:", allowed(m, nl, V))
m.consume_tokens(tok.encode('\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>', False))
print("the call is complete; </think> allowed again:", allowed(m, close, V))
whole = text + '\n{"name": "add", "arguments": {"a": 1}}\n</tool_call> so no.</think>\n\nHello'
print("accepted:", accepts(comp, tok, spec, whole))
p = ReasoningParser("qwen3")
print("qwen3 parser reads (reasoning, answer):", p.feed(whole, True))
