# Response fields OpenAI fills that roseinfer leaves out: completed_at, and the echo of prompt_cache_key /
# safety_identifier / prompt_cache_retention; prompt_cache_retention takes any string.
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
r = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=40, temperature=0,
                       prompt_cache_key="tenant-42", safety_identifier="user-7", prompt_cache_retention="24h")
print("status:", r.status, "| completed_at:", r.completed_at)
print("prompt_cache_key:", r.prompt_cache_key, "| safety_identifier:", r.safety_identifier,
      "| prompt_cache_retention:", r.prompt_cache_retention, "| text.verbosity:", r.text.verbosity)
r2 = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=2, extra_body={"prompt_cache_retention": "forever"})
print("prompt_cache_retention='forever' ->", r2.status)
