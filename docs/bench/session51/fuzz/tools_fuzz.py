"""Tool calling, batched vs alone: conversations with tools (tool_choice auto / required / named,
parallel or not), mixed in one crowded engine (each with its own ToolUse), against LLM.chat of
each alone on a big idle engine. Compares text, token ids, finish_reason, tool_calls (names,
arguments; ids are per request counters so compared too), logprobs. Usage: tools_fuzz.py SEED N"""
import json, random, sys
import fuzzlib as F
from roseinfer import SamplingParams
from roseinfer.chat import ChatMessage, ToolDefinition, chat_prompt_ids, read_tools, NamedToolChoice
from roseinfer.llm import _with_tools

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": False}, "strict": True}},
    {"type": "function", "function": {"name": "flag", "parameters": {
        "type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}},
]
USER = ["What's the weather in Paris?", "Add 2 and 3.", "Turn it on", "hi", "Weather in Rome and add 1 2"]


def make(rng):
    tools = rng.sample(TOOLS, rng.randint(1, 3))
    choice = rng.choice(["auto", "required", "named", "none"])
    if choice == "named":
        choice = {"type": "function", "function": {"name": rng.choice(tools)["function"]["name"]}}
    msgs = [{"role": "user", "content": rng.choice(USER) + " " + str(rng.randint(0, 99))}]
    kw = {"max_tokens": rng.choice([8, 20, 40, 60]), "temperature": 0.0}
    if rng.random() < 0.4:
        kw = dict(kw, temperature=rng.choice([0.7, 1.0]), seed=rng.randrange(1000))
    if rng.random() < 0.3:
        kw["logprobs"] = rng.choice([0, 2])
    if rng.random() < 0.2:
        kw["stop"] = [rng.choice(["}", "\"", "a"])]
    return {"msgs": msgs, "tools": tools, "choice": choice, "parallel": rng.random() < 0.5, "params": kw}


def build(llm, r):
    defs = [ToolDefinition.model_validate(t) for t in r["tools"]]
    ch = NamedToolChoice.model_validate(r["choice"]) if isinstance(r["choice"], dict) else r["choice"]
    shown, use = read_tools(defs, ch, r["parallel"])
    ids = chat_prompt_ids(llm.tokenizer, [ChatMessage.model_validate(m) for m in r["msgs"]], shown)
    p = F.to_params(r["params"])
    if use is not None:
        p = _with_tools(p, use)
    return ids, p, use


def summ(o):
    s = F.summarize(o)
    for c in s["choices"]:
        c["tool_calls"] = None if c["tool_calls"] is None else [(t.name, t.arguments) for t in c["tool_calls"]]
    return s


def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    ref = F.ref_llm("cpu", 16)
    bad = total = calls = 0
    for wi in range(n):
        rng = random.Random(seed * 1000 + wi)
        reqs = [make(rng) for _ in range(rng.randint(8, 24))]
        cfg = {"block_size": rng.choice([2, 4, 8]), "max_num_seqs": rng.randint(2, 12),
               "max_num_batched_tokens": rng.choice([4, 8, 16, 64])}
        built = [build(ref, r) for r in reqs]
        need = max(-(-(len(i) + p.max_tokens) // cfg["block_size"]) for i, p, _ in built)
        llm = F.make_llm("cpu", num_kv_blocks=need + rng.choice([0, 2, 8]), **cfg)
        rids = [llm._add(i, p, u) for i, p, u in built]
        while llm.engine.has_unfinished():
            llm.processor.step()
        outs = [llm.processor.states[r].output() for r in rids]
        for r in rids:
            llm.processor.abort(r)
        leaks = F.leaks(llm)
        for k, (r, o) in enumerate(zip(reqs, outs)):
            ch = r["choice"]
            (want,) = ref.chat(r["msgs"], F.to_params(r["params"]), use_tqdm=False, tools=r["tools"],
                               tool_choice=ch, parallel_tool_calls=r["parallel"])
            g, w_ = summ(o), summ(want)
            d = [x for x in F.compare(g, w_) if not x.startswith("TIE")]
            total += 1
            calls += len(g["choices"][0]["tool_calls"] or [])
            if d:
                bad += 1
                print(f"w{wi} req {k} {cfg} {json.dumps(r)[:300]}\n   {d[:3]}")
        if leaks:
            print("LEAK", wi, leaks)
    print(f"TOOLS workloads={n} requests={total} tool_calls={calls} mismatches={bad}")


main()
