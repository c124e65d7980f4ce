"""Each vLLM SamplingParams field, given a non-default value: accepted or refused (and how)."""
from roseinfer import SamplingParams
cases = {
 "n": 2, "best_of": 2, "presence_penalty": 0.5, "frequency_penalty": 0.5, "repetition_penalty": 1.2,
 "temperature": 0.5, "top_p": 0.5, "top_k": 5, "min_p": 0.1, "seed": 1, "stop": ["x"], "stop_token_ids": [1],
 "bad_words": ["x"], "include_stop_str_in_output": True, "ignore_eos": True, "max_tokens": 5, "min_tokens": 1,
 "logprobs": 1, "prompt_logprobs": 1, "detokenize": False, "skip_special_tokens": False,
 "spaces_between_special_tokens": False, "logits_processors": [lambda ids, l: l], "truncate_prompt_tokens": 4,
 "output_kind": 1, "structured_outputs": None, "guided_decoding": {"regex": "a"}, "logit_bias": {1: 1.0},
 "allowed_token_ids": [1, 2], "extra_args": {"a": 1}, "use_beam_search": True, "length_penalty": 0.5,
 "early_stopping": True, "stop_token_ids_none": None, "logprobs_-1": -1, "prompt_logprobs_-1": -1,
 "max_tokens_None": None, "stream_interval": 2, "thinking_token_budget": 10, "flat_logprobs": True,
 "logprob_token_ids": [1], "repetition_detection": None, "skip_reading_prefix_cache": True,
}
for name, value in cases.items():
    field = name.split("_None")[0].split("_none")[0].split("_-1")[0]
    try:
        sp = SamplingParams(**{field: value})
        print(f"ACCEPTED {name}={value!r}")
    except TypeError as e:
        print(f"TypeError {name}: {e}")
    except ValueError as e:
        print(f"ValueError {name}: {e}")
# vLLM: stop=None and stop_token_ids=None and bad_words=None are the defaults
for kw in ({"stop": None}, {"stop_token_ids": None}, {"bad_words": None}, {"logit_bias": {}}):
    try:
        print("ACCEPTED", kw, SamplingParams(**kw))
    except Exception as e:
        print(type(e).__name__, kw, e)
# vLLM SamplingParams has from_optional, clone, update_from_generation_config ...
for attr in ("from_optional", "clone", "all_stop_token_ids", "sampling_type", "output_kind", "detokenize"):
    print(attr, hasattr(SamplingParams(), attr))
print("default max_tokens", SamplingParams().max_tokens, "(vLLM: 16)")
