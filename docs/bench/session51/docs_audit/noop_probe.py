import json, sys, httpx
from roseinfer.server.fields import FIELDS, Kind
sys.path.insert(0, "/tmp/s51/docs_audit")
from refused_probe_lib import base, setf
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=60)
vals = {"metadata": {"a": "b"}, "dry_sequence_breakers": ["\n"], "service_tier": "auto", "prompt_cache_retention": "24h",
 "messages[].parsed": {"a": 1}, "guided_decoding_backend": "xgrammar", "structured_outputs.disable_any_whitespace": True,
 "structured_outputs.disable_fallback": True, "stream_options.include_obfuscation": True, "store": True, "user": "u",
 "safety_identifier": "s", "prompt_cache_key": "k", "cache_prompt": False, "cache_salt": "salt", "id_slot": 3, "n_keep": 5,
 "spaces_between_special_tokens": False, "length_penalty": 2.0, "xtc_threshold": 0.3, "mirostat_eta": 0.2, "mirostat_tau": 3.0,
 "dry_allowed_length": 3, "dry_base": 1.5, "dry_penalty_last_n": 10, "dynatemp_exponent": 2.0}
for f in FIELDS:
    if f.kind != Kind.NOOP: continue
    if "tool_calls[]" in f.name: continue
    for ep in f.endpoints:
        path, b = base[ep]
        v = vals.get(f.name)
        if v is None: print("no value for", f.name); continue
        body = setf(b, f.name, v)
        r = c.post(B+path, json=body)
        print(r.status_code, f.name, ep, "" if r.status_code == 200 else r.text[:200])
