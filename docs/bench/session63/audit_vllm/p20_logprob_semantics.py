"""Which distribution do the logprobs describe? Chosen-token logprob under logit_bias, temperature and a grammar."""
from common import post, MODEL
B = {"model": MODEL, "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 1, "logprobs": True, "top_logprobs": 3}
for label, extra in [("plain greedy", {"temperature": 0}), ("logit_bias -100 on 'The'(504)", {"temperature": 0, "logit_bias": {"504": -100}}),
                     ("temperature 0.5 top_k 1", {"temperature": 0.5, "top_k": 1, "seed": 1}),
                     ("structured choice ['Paris','Rome']", {"temperature": 0, "structured_outputs": {"choice": ["Paris", "Rome"]}})]:
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/chat/completions", {**B, **extra})
        t = j["choices"][0]["logprobs"]["content"][0]
        print(f"{label:40} [{s}] chose {t['token']!r} {t['logprob']:.3f} top={[(x['token'], round(x['logprob'], 3)) for x in t['top_logprobs']]}")
