from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
P="The capital of France is"
for b in [{"max_tokens":5,"stop":".\n\nThe"},{"max_tokens":2,"stop":"."},{"max_tokens":1,"stop":"Paris"},{"max_tokens":5,"stop":["\n\n","\n"]},{"max_tokens":5,"stop":["\n","."]},{"max_tokens":6,"stop":"The answer"}, {"max_tokens":5,"stop_token_ids":[504]}, {"max_tokens":5,"stop":"The","stop_token_ids":[504]}]:
    r=post(CO,{"prompt":P,"temperature":0,**b}); s=stext(CO,{"prompt":P,"temperature":0,**b,"stream":True})
    print(b, repr(r[1]["choices"][0]["text"]), r[1]["choices"][0]["finish_reason"], "| stream", s[1], s[2], r[1]["usage"]["completion_tokens"])
