from h import *
import re
U = [{"role": "user", "content": "Give me a date and a color."}]
G = [
 ("gbnf rep", 'root ::= [0-9]{4} "-" [0-9]{2} " " color\ncolor ::= "red" | "blue"', r"[0-9]{4}-[0-9]{2} (red|blue)"),
 ("gbnf neg class", 'root ::= "x" [^a-z\\n]+ "y"', r"x[^a-z\n]+y"),
 ("gbnf comment+ws", '# c\nroot   ::=   "a"   ( "b" | "c" )*   "d" # end', r"a[bc]*d"),
 ("gbnf dot any", 'root ::= "<" . "." ">"', r"<.\.>"),
 ("lark", 'start: "ok" NUM\nNUM: /[0-9]+/', r"ok[0-9]+"),
 ("gbnf escapes", 'root ::= "\\x41" "\\u00e9" "\\t"', "A\u00e9\t"),
 ("gbnf utf8 class", 'root ::= [α-ω]{3}', r"[α-ω]{3}"),
]
for label, g, rx in G:
    for field in ["grammar", "guided_grammar"]:
        s, j = post({"messages": U, "max_tokens": 24, field: g})
        if s != 200: print(label, field, s, j["error"]["message"][:200]); continue
        c = j["choices"][0]; t = c["message"]["content"]
        ok = re.fullmatch(rx, t, re.S) is not None
        print(label, field, c["finish_reason"], "MATCH" if ok else "NO-MATCH", repr(t))
