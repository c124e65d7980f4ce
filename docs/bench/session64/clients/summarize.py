"""Print a markdown table of results/*.json (one row per replayed body)."""
import json, glob, os
HERE = os.path.dirname(os.path.abspath(__file__))
print("| client | body | endpoint | first status | fields refused (peeled one by one) | after peeling | what the client reads |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for fn in sorted(glob.glob(os.path.join(HERE, "results", "*.json"))):
    for r in json.load(open(fn)):
        first = r["failures"][0]["status"] if r["failures"] else 200
        refused = ", ".join(f"`{f['param']}`" + (f"={json.dumps(f.get('value'))[:30]}" if f.get('code') != 'unknown_field' and '.' not in (f['param'] or '') and f['param'] != 'model' and f.get('value') not in (None, '<n/a>', '<nested>') else "") for f in r["failures"]) or "-"
        chk = "; ".join(r["check"] or []).replace("|", "/").replace("\n", "\\n")[:110]
        print(f"| {r['client']} | {r['label']} | {r['path']} | {first} | {refused} | {r['final_status']} | {chk} |")
