"""SamplingDefaults.from_generation_config on odd generation_config.json values."""
from roseinfer.sampling_params import SamplingDefaults
cases = [
    {"temperature": "0.7"}, {"top_k": -1}, {"top_k": 50}, {"top_k": 1.0}, {"top_k": True},
    {"temperature": None}, {"do_sample": False, "temperature": 0.6}, {"temperature": 0},
    {"max_new_tokens": 256.0}, {"max_new_tokens": 10**6}, {"max_new_tokens": "100"},
    {"top_p": 1.5}, {"repetition_penalty": "1.1"}, {"min_p": -0.1}, {"temperature": float("nan")},
    {"temperature": True}, {"top_p": [0.9]}, {"max_new_tokens": -1}, {"max_length": 20},
]
for c in cases:
    try:
        d = SamplingDefaults.from_generation_config(c)
        print("OK   ", c, "->", d, "changed:", d.changed())
    except Exception as e:
        print("RAISE", c, "->", type(e).__name__, e)
