from harness import *
probe("baseline", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "temperature": 0})
