B=http://127.0.0.1:18101/v1
j() { /work/main/.venv/bin/python -c "import json,sys;d=json.load(sys.stdin);print(json.dumps(d)[:300])"; }
echo "-- unknown field"; curl -s -w " %{http_code}\n" $B/conversations -H 'content-type: application/json' -d '{"foo":1}'
echo "-- empty body"; curl -s -w " %{http_code}\n" -X POST $B/conversations
C=$(curl -s $B/conversations -H 'content-type: application/json' -d '{"items":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}]}' | /work/main/.venv/bin/python -c "import json,sys;print(json.load(sys.stdin)['id'])")
echo "-- update {}"; curl -s -w " %{http_code}\n" $B/conversations/$C -H 'content-type: application/json' -d '{}'
echo "-- list limit=2"; curl -s "$B/conversations/$C/items?limit=2" | j
echo "-- list include"; curl -s -w " %{http_code}\n" "$B/conversations/$C/items?include=message.output_text.logprobs"
echo "-- create items include query"; curl -s -w " %{http_code}\n" "$B/conversations/$C/items?include=message.output_text.logprobs" -H 'content-type: application/json' -d '{"items":[{"role":"user","content":"d"}]}'
echo "-- responses w/ missing conv"; curl -s -w " %{http_code}\n" $B/responses -H 'content-type: application/json' -d '{"input":"x","conversation":"conv_nope","max_output_tokens":2}'
echo "-- responses w/ conv + store false"; curl -s $B/responses -H 'content-type: application/json' -d "{\"input\":\"x\",\"conversation\":\"$C\",\"max_output_tokens\":2,\"store\":false}" | j
curl -s "$B/conversations/$C/items?limit=3&order=desc" | j
