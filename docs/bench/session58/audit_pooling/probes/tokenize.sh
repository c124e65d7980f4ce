#!/bin/sh
# vLLM and llama.cpp /tokenize /detokenize /apply-template
U=${U:-http://127.0.0.1:18201}
p() { echo "== $1 $2"; curl -s -m 60 $U$1 -H 'Content-Type: application/json' -d "$2" | head -c 900; echo; }
p /tokenize '{"prompt":"Hello world"}'
p /tokenize '{"prompt":"Hello world","return_token_strs":true}'
p /tokenize '{"prompt":"<|im_start|>Hello","add_special_tokens":false,"return_token_strs":true}'
p /tokenize '{"messages":[{"role":"user","content":"Hi"}]}'
p /tokenize '{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":false}'
p /tokenize '{"content":"Hello world","with_pieces":true}'
p /tokenize '{"content":"<|im_start|>Hi","parse_special":false}'
p /tokenize '{"content":"Hello","add_special":true}'
p /tokenize '{"content":"é🦙","with_pieces":true}'
p /detokenize '{"tokens":[19556,905]}'
p /detokenize '{"tokens":[1,19556,2]}'
p /detokenize '{"tokens":[]}'
p /apply-template '{"messages":[{"role":"user","content":"Hi"}]}'
p /apply-template '{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hel"}]}'
p /tokenize '{"prompt":"x","model":"nope"}'
p /tokenize '{"prompt":"x","prompt_token_ids":[1]}'
p /tokenize '{"content":"<|im_start|>Hi\n","with_pieces":true}'
p /tokenize '{"content":[1,"Hi",2],"with_pieces":true}'
p /tokenize '{"prompt":"Hi","add_special_tokens":true,"return_token_strs":true}'
