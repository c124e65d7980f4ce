"""GBNF (llama.cpp's grammar format) to Lark, exactly as llguidance converts it, in time linear
in the grammar.

llguidance's converter (`llguidance.gbnf_to_lark`, Python) finds the rules that are terminals
(those that reference only terminals: it writes them in capitals, for its lexer) by sweeping
every rule until a sweep marks none, and a sweep marks one more rule of a chain: time grows with
the chain's length x the grammar's size, while holding the GIL (a dense 501-rule, 64 KB grammar
took 4.4-4.7 s, 4,000 chained rules 18 s). Here the same rules are found first, by counting down
each rule's unresolved references (a least fixpoint, as the sweeps reach), so llguidance's own
`resolve` sweeps once. Its parser, AST and `resolve` are used as they are; the output is the
text llguidance writes (tests/test_structured.py compares the two on a corpus and on random
rule graphs), but for one fix: llguidance's parser writes a `\\uXXXX` or `\\UXXXXXXXX` escape
without its leading zeros (`\\u00e9` as `\\ue9`), which neither Lark strings nor regexes read,
so llama.cpp grammars that spell characters so were refused (`_Parser`).
"""

from __future__ import annotations

from llguidance.gbnf_to_lark import (
    ASTNode,
    GbnfToLarkError,
    GrammarParser,
    Position,
    RuleNode,
    RuleRefNode,
    is_lark_syntax,
    resolve,
)

__all__ = ["gbnf_to_lark", "is_lark_syntax"]


def gbnf_to_lark(text: str) -> str:
    """The Lark grammar of a GBNF grammar; raises (llguidance's exceptions) if it is not one."""
    rules = _Parser().parse(text)
    _mark_terminals(rules)
    resolve(rules)
    ordered = sorted(rules.values(), key=lambda rule: rule.order)
    lark = "%llguidance {}\n\n"
    after_block = True  # a rule of several lines stands apart from its neighbours
    for rule in ordered:
        written = str(rule)
        if not after_block and "\n" in written:
            lark += "\n"
        lark += written + "\n"
        after_block = "\n" in written
        if after_block:
            lark += "\n"
    return lark


def _mark_terminals(rules: dict[str, RuleNode]) -> None:
    """Set `rule_is_terminal` on every rule other than `root` whose references all lead to such
    rules (none back to itself or to `root`): the rules llguidance's sweeps mark, in one pass
    over the grammar. A reference to a missing rule marks nothing (`resolve` refuses it)."""
    names = list(rules)
    index = {name: i for i, name in enumerate(names)}
    waiting: list[int] = []  # each rule's distinct references not yet known to be terminals
    users: list[list[int]] = [[] for _ in names]  # the rules referencing each rule
    for i, rule in enumerate(rules.values()):
        targets: set[int] = set()
        stack: list[ASTNode] = [rule.alternatives]
        while stack:
            node = stack.pop()
            if isinstance(node, RuleRefNode):
                # A missing rule: never a terminal (-1 is never counted down).
                targets.add(index.get(node.name, -1))
            stack.extend(node.children())
        waiting.append(len(targets))
        for target in targets - {-1}:
            users[target].append(i)
    root = index.get("root", -1)
    ready = [i for i, count in enumerate(waiting) if count == 0 and i != root]
    while ready:
        i = ready.pop()
        rules[names[i]].rule_is_terminal = True
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0 and user != root:
                ready.append(user)


class _Parser(GrammarParser):
    """llguidance's GBNF parser with its `\\u` / `\\U` escapes written so that Lark reads them:
    `\\uXXXX` (four digits: strings and regexes both read that) up to U+FFFF, the character
    itself beyond (strings read no `\\U`; no such character is special in either)."""

    def _parse_char(self, pos: Position) -> tuple[str, Position]:
        char, end = super()._parse_char(pos)  # its checks and errors
        kind = pos.peek(2)[1:] if pos.current() == "\\" else ""
        if kind in ("u", "U"):  # the digits as written (its own text drops the zeros)
            digits = pos.peek(6 if kind == "u" else 10)[2:]
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise GbnfToLarkError(pos, f"\\U{digits} is beyond Unicode (U+10FFFF)")
            char = f"\\u{code:04x}" if code <= 0xFFFF else chr(code)
        return char, end
