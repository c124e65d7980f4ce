"""qwen3 (thinking_first "optional"): the parser reads a block opened after blank space
("\\n<think>..."), the composed grammar does not let the output open one there."""
from common import *
from roseinfer.output.reasoning import ReasoningParser
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>"])
tok, comp = compiler_for(hf); V = len(hf)
spec = StructuredOutputs(json_object=True, thinking_first="optional")
text = '\n<think>q</think>\n\n{}'
print("qwen3 parser reads", repr(text), "as", ReasoningParser("qwen3").feed(text, True))
print("grammar accepts it:", accepts(comp, tok, spec, text))
m = comp.matcher(spec); m.consume_tokens(tok.encode("\n", False))
print("after a leading '\\n', <think> allowed:", allowed(m, tok.encode("<think>", False)[0], V))
