"""Victim streamed greedy (60 tokens) beside grammars that pass the compile and fail or grow later."""
import asyncio, sys
import p_perstep as P
P.CASES.update({
  "plain1": ("/v1/completions", P.base(1, 16)),
  "regex_1e6": ("/v1/completions", P.base(1, 16, guided_regex="a{1000000}")),
  "regex_alt20k": ("/v1/completions", P.base(1, 16, guided_regex="|".join("w%d" % i for i in range(20000)))),
  "json_minItems": ("/v1/completions", P.base(1, 16, guided_json={"type": "array", "minItems": 5000, "items": {"type": "integer"}})),
  "choice20k": ("/v1/completions", P.base(1, 16, guided_choice=["c%d" % i for i in range(20000)])),
})
sys.argv = [sys.argv[0], "plain1", "regex_1e6", "regex_alt20k", "json_minItems", "choice20k", "regex_1e6"]
asyncio.run(P.main())
