import json, fuzzlib as F
w = json.load(open("fails/w352.json")); req = w["reqs"][8]
print(F.seed_boundary(w["backend"], 2, req, 0, 7, 29449, 46068))
w = json.load(open("fails/w324.json")); req = w["reqs"][14]
print(F.seed_boundary(w["backend"], 16, req, 0, 3, 8628, 8626))
w = json.load(open("fails/w241.json")); req = w["reqs"][2]
print(F.seed_boundary(w["backend"], 4, req, 0, 8, 28681, 28678))
w = json.load(open("fails/w210.json")); req = w["reqs"][28]
print(F.seed_boundary(w["backend"], 1, req, 2, 16, 13583, 13582))
