from p1 import P
import httpx
from harness import BASE
httpx.post(BASE+"/v1/completions", json={"prompt":"Hi","max_tokens":2,"guided_regex":"a+"}, timeout=60)
