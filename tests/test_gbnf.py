"""GBNF to Lark (roseinfer/structured/gbnf.py): the text llguidance's own converter writes, in
time linear in the grammar (llguidance's sweeps grew with a rule chain's length x the grammar's
size: 4,000 chained rules took 18 s, holding the GIL), so GBNF takes as many rules as the
64 KiB a grammar may have."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llguidance import gbnf_to_lark as llguidance_gbnf

from roseinfer import LLM
from roseinfer.sampling_params import SamplingParams, StructuredOutputs
from roseinfer.structured.gbnf import gbnf_to_lark

CORPUS = {
    "choices": 'root ::= "yes" | "no" | "maybe"',
    "arithmetic": """
        root  ::= (expr "=" ws term "\\n")+
        expr  ::= term ([-+*/] term)*
        term  ::= ident | num | "(" ws expr ")" ws
        ident ::= [a-z] [a-z0-9_]* ws
        num   ::= [0-9]+ ws
        ws    ::= [ \\t\\n]*
    """,
    "json-like": """
        # a value, as llama.cpp's json.gbnf writes it
        root   ::= object
        value  ::= object | array | string | number | ("true" | "false" | "null") ws
        object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
        array  ::= "[" ws ( value ("," ws value)* )? "]" ws
        string ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\\"" ws
        number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [1-9] [0-9]{0,15})? ws
        ws ::= | " " | "\\n" [ \\t]{0,20}
    """,
    "names": 'root ::= camelCase kebab-name\ncamelCase ::= "a"\nkebab-name ::= "b" | camelCase',
    "self-recursive": 'root ::= item\nitem ::= "x" item | "y"',
    "mutual": 'root ::= a\na ::= "(" b ")" | "a"\nb ::= a | "b"',
    "back-to-root": 'root ::= "a" | "(" inner ")"\ninner ::= root',
    # chains in both orders: the order llguidance's sweeps were slow in, and the other
    "chain-forward": "\n".join(
        ["root ::= r0", *(f"r{i} ::= r{i + 1}" for i in range(30)), 'r30 ::= "e"']
    ),  # fmt: skip
    "chain-backward": "\n".join(
        ["root ::= r0", 'r30 ::= "e"', *(f"r{i} ::= r{i + 1}" for i in reversed(range(30)))]
    ),  # fmt: skip
    "repetitions": 'root ::= "a"{2} "b"{1,} "c"{0,3} ("d" | "e")? [x-z]*',
    # (`\\u` and `\\U` escapes are written otherwise: test_unicode_escapes_...)
    "escapes": 'root ::= "\\x41\\t" [\\[\\]/]',
    "multi-line": 'root ::=\n  ( "a"\n  | "b"\n  | c\n  )\nc ::= "c" root',
}
REFUSED = {
    "missing-rule": "root ::= missing",
    "no-root": 'a ::= "x"',
    "both-names": 'root ::= "a"\nstart ::= "b"',
    "bad-escape": 'root ::= "\\q"',
    "no-separator": 'root "a"',
}


def converted(text: str) -> tuple[str, str]:
    """("ok", Lark) or ("error", the message) of a converter."""
    try:
        return "ok", gbnf_to_lark(text)
    except Exception as e:
        return "error", str(e)


def converted_by_llguidance(text: str) -> tuple[str, str]:
    try:
        return "ok", llguidance_gbnf.gbnf_to_lark(text)
    except Exception as e:
        return "error", str(e)


@pytest.mark.parametrize("name", [*CORPUS, *REFUSED])
def test_the_conversion_is_llguidances(name):
    text = CORPUS.get(name) or REFUSED[name]
    ours = converted(text)
    assert ours == converted_by_llguidance(text)
    assert ours[0] == ("error" if name in REFUSED else "ok"), ours


@st.composite
def rule_graphs(draw) -> str:
    """A random GBNF grammar: rules of alternatives of sequences of literals, classes, groups
    and references to any rule (root included, so cycles of every kind appear), in any order;
    at times a rule defined twice, one named `start`, or a reference to no rule."""
    names = ["root", *(f"r{i}" for i in range(draw(st.integers(0, 7))))]
    referable = names + draw(st.sampled_from([[], ["missing"]]))
    atoms = st.one_of(st.sampled_from(['"a"', '"bc"', "[x-z]", "[^q]"]),
                      st.sampled_from(referable))  # fmt: skip

    def sequence(item):
        return st.lists(item, min_size=1, max_size=3).map(" ".join)

    def alternatives(item):
        return st.lists(sequence(item), min_size=1, max_size=3).map(" | ".join)

    items = st.recursive(
        atoms,
        lambda inner: st.one_of(
            alternatives(inner).map(lambda a: f"({a})"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}"])).map(
                lambda t: f"({t[0]}){t[1]}"
            ),
        ),  # fmt: skip
        max_leaves=6,
    )
    order = [*draw(st.permutations(names)),
             *draw(st.lists(st.sampled_from([*names, "start"]), max_size=2))]  # fmt: skip
    return "\n".join(f"{name} ::= {draw(alternatives(items))}" for name in order) + "\n"


@settings(max_examples=300, deadline=None)
@given(rule_graphs())
def test_random_grammars_convert_as_llguidance_converts_them(text):
    assert converted(text) == converted_by_llguidance(text)


def test_the_terminals_are_found_in_one_pass(monkeypatch):
    """A chain whose rules reference the next: llguidance's sweeps mark one rule a sweep, each
    sweep asking every node of every rule not yet marked (7,561 asks here, 24 a node). Marked
    first, its `resolve` sweeps once, asking only the rules left unmarked: each node at most
    once."""
    chain = "\n".join(["root ::= r0", *(f'r{i} ::= "x" [a-z] "y" r{i + 1}' for i in range(60)),
                       'r60 ::= "e"'])  # fmt: skip
    nodes = 2 + 61 * 5  # root and its reference, then each rule's sequence and four atoms
    asked = 0
    is_terminal = llguidance_gbnf.ASTNode.is_terminal

    def counted(self):
        nonlocal asked
        asked += 1
        return is_terminal(self)

    monkeypatch.setattr(llguidance_gbnf.ASTNode, "is_terminal", counted)
    lark = gbnf_to_lark(chain)
    assert "R59: " in lark and "R60: " in lark, lark
    assert asked <= nodes, asked


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return LLM(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)


@pytest.mark.parametrize("cycle", [False, True])
def test_a_gbnf_grammar_of_thousands_of_rules_is_honoured(llm, cycle):
    """4,200 chained rules in 64 KB: refused at 512 rules while the conversion grew with
    rules x size. `cycle`: the last rule can go back to root, so no rule is a terminal and the
    compiled grammar is a chain of 4,200 rules."""
    last = '"ok" [a-c]' + (' | "(" root ")"' if cycle else "")
    rules = ["root ::= r0", *(f"r{i} ::= r{i + 1}" for i in range(4200)), f"r4200 ::= {last}"]
    grammar = "\n".join(rules)
    assert 60_000 < len(grammar) <= 65_536
    params = SamplingParams(max_tokens=8, structured_outputs=StructuredOutputs(grammar=grammar))
    out = llm.generate("x", params, use_tqdm=False)[0]
    if out.finish_reason == "stop":
        inner = out.text.lstrip("(").rstrip(")")
        assert inner in ("oka", "okb", "okc") and out.text.count("(") == out.text.count(")"), (
            out.text
        )
    else:  # cut by max_tokens inside the parentheses
        assert out.finish_reason == "length" and set(out.text) <= set("("), out.text


@pytest.mark.parametrize(
    ("grammar", "valid"),
    [
        (r'root ::= "caf" "\u00e9"', lambda t: t == "café"),
        (r"root ::= [\u00e0-\u00ff]{3}", lambda t: len(t) == 3 and all("à" <= c <= "ÿ" for c in t)),
        (
            r'root ::= "\U0001F600" [\U00000041-\U0000005a]',
            lambda t: t[0] == "😀" and "A" <= t[1:] <= "Z",
        ),
        (r'root ::= "\u0022" [\x41-\x42]', lambda t: t in ('"A', '"B')),
    ],
)
def test_unicode_escapes_with_leading_zeros_are_honoured(llm, grammar, valid):
    """llama.cpp's `\\uXXXX` and `\\UXXXXXXXX` escapes: llguidance's converter dropped their
    leading zeros (`\\u00e9` as `\\ue9`, which Lark does not read), so these valid grammars were
    refused."""
    params = SamplingParams(max_tokens=12, structured_outputs=StructuredOutputs(grammar=grammar))
    out = llm.generate("x", params, use_tqdm=False)[0]
    assert out.finish_reason == "stop" and valid(out.text), out.text


def test_an_escape_beyond_unicode_is_refused_naming_it():
    with pytest.raises(Exception, match=r"\\U00110000 is beyond Unicode"):
        gbnf_to_lark(r'root ::= "\U00110000"')
