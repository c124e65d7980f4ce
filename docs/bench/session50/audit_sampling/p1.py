from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
P="The capital of France is"
M=[{"role":"user","content":"Name three colors."}]
# temperature
for t in [0, 1e-9, 1e-5, 2, 2.5, 100, -0.1, "0.5", True, None]:
    show(f"temp={t!r}", post(CO, {"prompt":P,"max_tokens":5,"temperature":t,"seed":1}))
for tp in [0, 1e-9, 1, 1.01, -1]:
    show(f"top_p={tp}", post(CO, {"prompt":P,"max_tokens":5,"top_p":tp,"seed":1}))
for tk in [-1, 0, 1, -2, 1.0, 2**31, 10**30]:
    show(f"top_k={tk}", post(CO, {"prompt":P,"max_tokens":5,"top_k":tk,"seed":1}))
for mp in [0, 0.5, 1, 1.1, -0.1]:
    show(f"min_p={mp}", post(CO, {"prompt":P,"max_tokens":5,"min_p":mp,"seed":1}))
for k in ["presence_penalty","frequency_penalty","repetition_penalty"]:
    for v in [-2, 2, 2.01, 0, -3, 100]:
        show(f"{k}={v}", post(CO, {"prompt":P,"max_tokens":5,k:v,"temperature":0}))
