# truncation on a 512-token server (port 18102): disabled -> 400; auto -> oldest dropped.
# Also: a prompt that FITS the context but not with the default output room -- OpenAI truncates only when the input exceeds the context.
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18102/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
def conv(n, words=40):
    items = []
    for i in range(n):
        items += [{"role": "user", "content": f"turn {i}: " + "apple " * words}, {"role": "assistant", "content": "ok " * 5}]
    return items + [{"role": "user", "content": "last question"}]
for n in (3, 6, 12):
    inp = conv(n)
    cnt = c.responses.input_tokens.count(model=M, input=inp).input_tokens
    try:
        r = c.responses.create(model=M, input=inp, max_output_tokens=4, temperature=0, store=False)
        d = f"disabled: 200 input_tokens={r.usage.input_tokens}"
    except openai.BadRequestError as e:
        d = f"disabled: {e.status_code} {e.body.get('code')}"
    r = c.responses.create(model=M, input=inp, truncation="auto", temperature=0, store=False, max_output_tokens=4)
    r2 = c.responses.create(model=M, input=inp, truncation="auto", temperature=0, store=False)
    print(f"n={n} full prompt={cnt} tokens | {d} | auto+max_output_tokens=4: input_tokens={r.usage.input_tokens} | auto, no max_output_tokens: input_tokens={r2.usage.input_tokens} output={r2.usage.output_tokens}")
