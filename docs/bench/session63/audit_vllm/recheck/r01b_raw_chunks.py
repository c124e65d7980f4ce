"""1b. Raw first and last chat chunks with return_token_ids (the code run inline for out_r01b_raw_chunks.txt)."""
import json

from rc import CHAT, MODEL, MSG, stream

b = {"model": MODEL, "messages": MSG, "temperature": 0, "max_tokens": 8, "return_token_ids": True, "stream": True}
for s in ("vllm", "rose"):
    st, ch = stream(s, CHAT, b)
    print(s)
    print("  first", json.dumps(ch[0])[-260:])
    print("  last", json.dumps(ch[-2]))
