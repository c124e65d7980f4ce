import sys, importlib
mod = importlib.import_module(sys.argv[1])
from harness import probe
names = sys.argv[2:] or list(mod.P)
for n in names:
    path, body = mod.P[n]
    probe(n, path, body)
