import importlib.util, json, time, sys
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
new = load("/work/main/roseinfer/server/jsonbody.py", "jb_new")
old = load("/tmp/s50/review2/old/roseinfer/server/jsonbody.py", "jb_old")
bodies = {
 "200k msgs": json.dumps({"messages": [{"role": "user", "content": "hi there"}] * 200000}).encode(),
 "1M floats": json.dumps({"prompt": "x", "logit_bias": {}, "x": [0.5] * 1000000}).encode(),
 "4MiB str": json.dumps({"prompt": "word " * 800000}).encode(),
}
for k, b in bodies.items():
    for name, m in (("old", old), ("new", new)):
        best = 1e9
        for _ in range(3):
            t = time.perf_counter()
            try: m.read_json(b)
            except Exception as e: pass
            best = min(best, time.perf_counter() - t)
        print(f"{k:10} {name} {len(b)/1e6:.1f}MB {best:.3f}s")
