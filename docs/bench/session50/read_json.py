"""`read_json` on big bodies, at two commits' jsonbody.py (their source loaded side by side):
median of 5 (seconds). Session 50's review found the duplicate-key hook and the float scan held
the event loop 1.3-2.7x longer; b1b9b50 scans floats only after the parse met NaN/Infinity.
    .venv/bin/python docs/bench/session50/read_json.py 0bc2d46 acbca0c b1b9b50"""
import json, statistics, subprocess, sys, time, types

bodies = {
    "200k message objects (8.6 MB)": json.dumps({"messages": [{"role": "user", "content": f"m{i}"} for i in range(200_000)]}).encode(),
    "1M floats (9.9 MB)": json.dumps({"x": [i / 7 for i in range(1_000_000)]}).encode(),
    "1M ints (7.9 MB)": json.dumps({"x": list(range(1_000_000))}).encode(),
}
for commit in sys.argv[1:]:
    src = subprocess.run(["git", "show", f"{commit}:roseinfer/server/jsonbody.py"], capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType(f"jsonbody_{commit}")
    exec(compile(src, f"jsonbody@{commit}", "exec"), mod.__dict__)
    for name, raw in bodies.items():
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            mod.read_json(raw)
            times.append(time.perf_counter() - t0)
        print(f"{commit} {name}: {statistics.median(times):.3f} s")
