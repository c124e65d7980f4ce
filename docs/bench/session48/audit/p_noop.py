from h import *
# no-op fields: right type -> 200 and same output; wrong type -> 400
base = chat()[1]["choices"][0]["message"]["content"]
basec = comp()[1]["choices"][0]["text"]
cases = [
 ("user", "u1", 5), ("metadata", {"a": "b"}, {"a": 1}), ("store", True, "yes"), ("service_tier", "flex", "gold"),
 ("prompt_cache_key", "k", 1), ("safety_identifier", "s", 2), ("cache_salt", "s", 3), ("cache_prompt", False, 1),
 ("id_slot", 3, "a"), ("n_keep", 5, 1.5), ("spaces_between_special_tokens", False, 0), ("length_penalty", 2.0, "a"),
 ("guided_decoding_backend", "xgrammar", 1), ("mirostat_tau", 3.0, "x"), ("mirostat_eta", 0.2, None),
 ("dynatemp_exponent", 2, "x"), ("dry_base", 1.5, "x"), ("dry_allowed_length", 2, 2.5), ("dry_penalty_last_n", -1, "x"),
 ("dry_sequence_breakers", ["\n"], "\n"), ("xtc_threshold", 0.1, "x"),
]
for name, good, bad in cases:
    for fn, b0, key in ((chat, base, "chat"), (comp, basec, "comp")):
        s, j, _ = fn({name: good})
        if s == 400 and "not a field" in j["error"]["message"]:
            print(f"{key} {name}: unknown here (400)"); continue
        out = (j["choices"][0].get("message", {}).get("content") if key == "chat" else j["choices"][0]["text"]) if s == 200 else None
        same = out == b0
        s2, j2, _ = fn({name: bad})
        p2 = j2.get("error", {}).get("param") if s2 != 200 else None
        print(f"{key} {name}: good->{s} same={same}  bad {bad!r}->{s2} param={p2}")
# nested no-ops / stream_options
show("stream_options.include_obfuscation true (no stream)", chat({"stream_options": {"include_obfuscation": True}}))
show("stream_options.include_obfuscation 'x'", chat({"stream_options": {"include_obfuscation": "x"}}))
show("stream_options.continuous_usage_stats true", chat({"stream": True, "stream_options": {"continuous_usage_stats": True}}))
show("stream_options.foo", chat({"stream_options": {"foo": True}}))
show("stream_options.include_usage 'yes'", chat({"stream_options": {"include_usage": "yes"}}))
show("stream_options = 5", chat({"stream_options": 5}))
show("stream_options = []", chat({"stream_options": []}))
