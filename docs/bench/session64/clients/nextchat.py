"""NextChat (ChatGPTNextWeb/NextChat) app/client/platforms/openai.ts chat(): requestPayload
{messages, stream, model, temperature, presence_penalty, frequency_penalty, top_p}; max_tokens only
for vision models; defaults app/store/config.ts (temperature 0.5, top_p 1, penalties 0)."""
from _common import peel, reset, MODEL, MSGS
C = "nextchat"; reset(C)
S = "ChatGPTNextWeb/NextChat app/client/platforms/openai.ts + app/store/config.ts"
peel(C, "chat-default", "/v1/chat/completions",
     {"messages": MSGS, "stream": True, "model": MODEL, "temperature": 0.5, "presence_penalty": 0,
      "frequency_penalty": 0, "top_p": 1}, "chat", S)
peel(C, "summarize-no-stream", "/v1/chat/completions",
     {"messages": MSGS, "stream": False, "model": MODEL, "temperature": 0.5, "presence_penalty": 0,
      "frequency_penalty": 0, "top_p": 1}, "chat", S, "topic/summary calls run with stream:false")
