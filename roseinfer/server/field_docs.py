"""README.md's "API fields" table, generated from the field table (`fields.py`), and the command
that writes it into README.md between its markers:

    python -m roseinfer.server.field_docs README.md

(tests/test_fields.py fails while README's table is not the generated one)."""

from __future__ import annotations

import re
import sys

from roseinfer.server.fields import ENDPOINTS, FIELDS, GENERATE, Kind

START, END = "<!-- fields:start -->\n", "<!-- fields:end -->"
SECTION = re.compile(re.escape(START) + r"(.*?)" + re.escape(END), re.S)


def fields_markdown() -> str:
    """The table: honoured, then no-op, then refused rows, by name (/generate's last)."""
    order = {Kind.HONOURED: 0, Kind.NOOP: 1, Kind.REFUSED: 2}
    rows = sorted(FIELDS, key=lambda s: (order[s.kind], s.endpoints == (GENERATE,), s.name))
    lines = [
        "| field | endpoints | from | class | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in rows:
        endpoints = ", ".join(ENDPOINTS[e] for e in s.endpoints)
        kind = s.kind.value
        if s.kind is Kind.REFUSED:
            kind = f"refused unless {s.accepts_doc}"
        doc = s.doc.replace("|", "\\|")
        lines.append(f"| `{s.name}` | {endpoints} | {s.origin} | {kind} | {doc} |")
    return "\n".join(lines) + "\n"


def readme_table(readme: str) -> str | None:
    """The table README's section holds (None: it has no section)."""
    found = SECTION.search(readme)
    return None if found is None else found.group(1)


def counts() -> dict[str, int]:
    """(field, endpoint) pairs per class."""
    out = {k.value: 0 for k in Kind}
    for spec in FIELDS:
        out[spec.kind.value] += len(spec.endpoints)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "README.md"
    with open(path, encoding="utf-8") as f:
        readme = f.read()
    if readme_table(readme) is None:
        print(f"{path} has no {START.strip()} ... {END} section", file=sys.stderr)
        return 1
    table = fields_markdown()
    with open(path, "w", encoding="utf-8") as f:
        f.write(SECTION.sub(lambda _: START + table + END, readme, count=1))
    print(f"{path}: the API fields table written ({len(FIELDS)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
