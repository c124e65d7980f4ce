C, CH = "/v1/completions", "/v1/chat/completions"
def comp(**kw): return {"prompt": "Hello", "max_tokens": 16, "temperature": 0, **kw}
P = {}
P["baseline"] = (C, comp())
P["bad_words_10000_n128"] = (C, comp(bad_words=[f"word{i}" for i in range(10000)], max_tokens=1, n=128, temperature=1))
P["bad_words_10000_long"] = (C, comp(bad_words=[("lorem ipsum dolor sit amet " * 12) + str(i) for i in range(10000)], max_tokens=4))
