from common import *
with Victim() as v: time.sleep(6)
print("baseline victim:", summary(v.samples))
probe("bad_words_10000_n128", "/v1/completions", {"prompt": "Hello", "max_tokens": 1, "n": 128, "temperature": 1, "bad_words": [f"word{i}" for i in range(10000)]}, timeout=120)
probe("bad_words_10000_long_n1", "/v1/completions", {"prompt": "Hello", "max_tokens": 4, "temperature": 0, "bad_words": [("lorem ipsum dolor sit amet " * 12) + str(i) for i in range(10000)]}, timeout=120)
big = {"prompt": "hello world " * 330000, "max_tokens": 4}
probe("prompt_3_9MB", "/v1/completions", big, timeout=120)
conc("4x prompt_3_9MB", "/v1/completions", [big] * 4, timeout=120)
probe("chat_3_9MB", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hello world " * 330000}], "max_tokens": 4}, timeout=120)
probe("tokenize_3_9MB", "/tokenize", {"prompt": "hello world " * 330000}, timeout=120)
