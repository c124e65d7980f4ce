import typing, sys
sys.path.insert(0, "/tmp/s59/audit_api/wt")
from openai.types.chat import completion_create_params as cc
from openai.types import completion_create_params as co
from roseinfer.server.fields import TABLE
def keys(t):
    return set(typing.get_type_hints(t, include_extras=True).keys())
chat = keys(cc.CompletionCreateParamsBase)
comp = keys(co.CompletionCreateParamsBase)
print("chat openai fields not in table:", sorted(chat - set(TABLE["chat"])))
print("completions openai fields not in table:", sorted(comp - set(TABLE["completions"])))
for name in sorted(chat):
    s = TABLE["chat"].get(name); print("chat", name, s.kind.name if s else None)
for name in sorted(comp):
    s = TABLE["completions"].get(name); print("comp", name, s.kind.name if s else None)
