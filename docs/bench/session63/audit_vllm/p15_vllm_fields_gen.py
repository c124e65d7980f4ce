"""(Run with vLLM's python.) Dump every field of vLLM 0.32's Chat/Completion/Responses request models with its
default, to vllm_fields.json, for p15_vllm_fields_probe.py."""
import json
from pydantic_core import PydanticUndefined
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.completion.protocol import CompletionRequest
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
out = {}
for name, M in (("chat", ChatCompletionRequest), ("completions", CompletionRequest), ("responses", ResponsesRequest)):
    d = {}
    for f, info in M.model_fields.items():
        dv = info.default
        if dv is PydanticUndefined and info.default_factory is not None:
            try:
                dv = info.default_factory()
            except TypeError:
                dv = "<factory>"
        try:
            json.dumps(dv)
        except TypeError:
            dv = repr(dv)
        d[f] = None if dv is PydanticUndefined else dv
    out[name] = d
json.dump(out, open("vllm_fields.json", "w"), indent=1, default=str)
print({k: len(v) for k, v in out.items()})
