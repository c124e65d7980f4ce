# For each refused field: a non-neutral value -> 400 naming it; neutral value -> 200.
import sys; sys.path.insert(0, "/work/main")
from h import *
from roseinfer.server import fields as F
nonneutral = {
 "n_probs": 5, "echo": True, "suffix": "x", "best_of": 3, "use_beam_search": True, "repeat_last_n": 64,
 "typical_p": 0.5, "tfs_z": 0.5, "top_n_sigma": 1.0, "min_keep": 5, "mirostat": 2, "dynatemp_range": 0.5,
 "dry_multiplier": 0.8, "xtc_probability": 0.5, "samplers": ["top_k"], "logits_processors": ["x"],
 "include_stop_str_in_output": True, "skip_special_tokens": False, "add_special_tokens": None,
 "t_max_predict_ms": 100, "n_indent": 2, "priority": 1, "tools": [{"type":"function","function":{"name":"f"}}],
 "tool_choice": "required", "parse_tool_calls": False, "functions": [{"name": "f"}], "function_call": {"name": "f"},
 "guided_whitespace_pattern": " ", "chat_template": "{{x}}", "documents": [{"a":"b"}], "mm_processor_kwargs": {"a":1},
 "image_data": [{"data":"x","id":1}], "multimodal_data": ["x"], "lora": [{"id":0,"scale":1}], "modalities": ["text","audio"],
 "audio": {"voice":"alloy","format":"wav"}, "prediction": {"type":"content","content":"x"}, "web_search_options": {},
 "reasoning_effort": "low", "verbosity": "low", "reasoning_format": "deepseek", "return_tokens_as_token_ids": True,
 "return_token_ids": True, "return_tokens": True, "timings_per_token": True, "post_sampling_probs": True,
 "return_progress": True, "response_fields": ["content"], "kv_transfer_params": {}, "vllm_xargs": {"a": 1},
}
neutral = {
 "n_probs": 0, "echo": False, "suffix": "", "best_of": 1, "use_beam_search": False, "repeat_last_n": -1,
 "typical_p": 1, "tfs_z": 1.0, "top_n_sigma": -1, "min_keep": 0, "mirostat": 0, "dynatemp_range": 0,
 "dry_multiplier": 0, "xtc_probability": 0.0, "samplers": None, "logits_processors": [],
 "include_stop_str_in_output": False, "skip_special_tokens": True,
 "t_max_predict_ms": 0, "n_indent": 0, "priority": 0, "tools": [], "tool_choice": "none", "parse_tool_calls": True,
 "functions": [], "function_call": "none", "guided_whitespace_pattern": None, "chat_template": None, "documents": [],
 "mm_processor_kwargs": {}, "image_data": [], "multimodal_data": [], "lora": [], "modalities": ["text"], "audio": None,
 "prediction": None, "web_search_options": None, "reasoning_effort": None, "verbosity": None, "reasoning_format": "none",
 "return_tokens_as_token_ids": False, "return_token_ids": False, "return_tokens": False, "timings_per_token": False,
 "post_sampling_probs": False, "return_progress": False, "response_fields": [], "kv_transfer_params": None, "vllm_xargs": {},
}
for spec in F.FIELDS:
    if spec.kind is not F.Kind.REFUSED or "." in spec.name: continue
    for ep in spec.endpoints:
        fn = chat if ep == F.CHAT else comp
        name = spec.name
        if name == "add_special_tokens":
            nn = False if ep == F.COMPLETIONS else True
            nu = True if ep == F.COMPLETIONS else False
        else:
            if name not in nonneutral: print("MISSING", name); continue
            nn, nu = nonneutral[name], neutral.get(name)
        s, j, _ = fn({name: nn})
        p = j.get("error", {}).get("param") if isinstance(j, dict) and "error" in j else None
        flag = "" if (s == 400 and p == name) else "  <-- CHECK"
        print(f"{ep:11s} {name:28s} nonneutral={nn!r:.30} -> {s} param={p}{flag}")
        s2, j2, _ = fn({name: nu})
        flag2 = "" if s2 == 200 else "  <-- CHECK " + short(j2, 200)
        print(f"{ep:11s} {name:28s} neutral={nu!r:.30} -> {s2}{flag2}")
