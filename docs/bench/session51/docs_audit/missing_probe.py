import sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=60)
cands = {"include_reasoning": True, "prompt_embeds": None, "media_io_kwargs": {}, "thinking_token_budget": 10, "penalize_nl": False,
 "n_discard": 0, "t_max_prompt_ms": -1, "slot_id": 0, "n_cmpl": 1, "reasoning_budget": -1, "enable_thinking": False, "logprobs_mode": "raw_logprobs",
 "repetition_context_size": 0, "structural_tag": None, "top_a": 0, "tfs": 1, "stop_sequences": None, "preserved_tokens": [], "grammar_lazy": False,
 "grammar_triggers": [], "thinking_forced_open": False, "return_tokens_as_token_ids": False, "truncation_side": "left", "max_completion_tokens": 2}
for ep, base in (("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 2}), ("/v1/completions", {"prompt": "x", "max_tokens": 2})):
    for k, v in cands.items():
        b = dict(base); b[k] = v
        if k == "max_completion_tokens": b.pop("max_tokens")
        r = c.post(B+ep, json=b)
        if r.status_code != 200: print(ep, k, r.status_code, r.json()["error"].get("code"))
