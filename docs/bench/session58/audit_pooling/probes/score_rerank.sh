#!/bin/sh
# vLLM /score and /rerank shapes and fields
U=${U:-http://127.0.0.1:18201}
p() { echo "== $1 $2"; curl -s -m 60 $U$1 -H 'Content-Type: application/json' -d "$2" | head -c 900; echo; }
p /score '{"text_1":"What is the capital of France?","text_2":["Paris is the capital.","Bananas are yellow."]}'
p /v1/score '{"text_1":["a","b"],"text_2":["a","c"]}'
p /score '{"text_1":["a","b"],"text_2":"a"}'
p /score '{"queries":"a","documents":["a","b"]}'
p /rerank '{"query":"capital of France","documents":["Bananas are yellow.","Paris is the capital of France.","x"],"top_n":2}'
p /v1/rerank '{"query":"q","documents":["a","b"],"return_documents":false}'
p /rerank '{"query":"q","documents":[{"text":"a"},{"text":"b"}]}'
p /rerank '{"query":"q","texts":["a","b"]}'
p /rerank '{"query":"q","documents":["a","b"],"top_n":0}'
p /rerank '{"query":"q","documents":["a","b"],"user":"u","use_activation":false}'
p /score '{"text_1":"a","text_2":["b"],"use_activation":false}'
