# llguidance's GBNF-to-Lark conversion of a chain of n rules, and of n flat ones (s)
import time
from llguidance.gbnf_to_lark import gbnf_to_lark
for n in (128, 256, 512, 1024):
    g = 'root ::= r0\n' + "\n".join(f'r{i} ::= "t{i}" r{i+1} | "u{i}"' for i in range(n)) + f'\nr{n} ::= "end"\n'
    t = time.time(); gbnf_to_lark(g); print("chain", n, len(g), round(time.time() - t, 3))
    g = 'root ::= ' + " | ".join(f'r{i}' for i in range(n)) + "\n" + "\n".join(f'r{i} ::= "t{i}"' for i in range(n)) + "\n"
    t = time.time(); gbnf_to_lark(g); print("flat", n, len(g), round(time.time() - t, 3))
