from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
M=[{"role":"user","content":"Write a list of fruits."},{"role":"assistant","content":"1. Apple\n2."}]
base={"messages":M,"temperature":0,"max_tokens":8}
for kv in [{},{"add_generation_prompt":False},{"continue_final_message":True},{"continue_final_message":True,"add_generation_prompt":False},{"chat_template_kwargs":{}},{"chat_template_kwargs":{"enable_thinking":False}},{"chat_template_kwargs":{"add_generation_prompt":False}},{"chat_template_kwargs":{"messages":[]}},{"chat_template_kwargs":{"tools":None}},{"chat_template_kwargs":{"bos_token":"X"}},{"chat_template_kwargs":{"continue_final_message":True}},{"chat_template_kwargs":{"add_generation_prompt":True}}]:
    show(str(kv), post(CH,{**base,**kv}))
for kv in [{"add_generation_prompt":False},{"continue_final_message":True,"add_generation_prompt":False},{"chat_template_kwargs":{"add_generation_prompt":False}}]:
    s,j=post("/tokenize",{"messages":M,**kv,"return_token_strs":False}); print("tok",kv,s, j.get("count") if isinstance(j,dict) else j)
s,j=post("/tokenize",{"messages":M}); print("tok default", j.get("count"))
