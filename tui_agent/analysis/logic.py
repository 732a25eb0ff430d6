"""Where a field comes from in code: the lines that name it (for the feedback modal)."""

from __future__ import annotations

import ast

MAX_STATEMENT_LINES = 4
MAX_SNIPPETS = 4


def field_logic(code: str, field: str) -> str | None:
    """The statements of `code` that produce `field`, with line numbers; None if none.

    A statement counts when it holds the field's name (the last part of a dotted name) as a
    string constant (a dict key, a subscript like `item["price"] = ...`, a mapping value) or
    as a keyword argument. Short statements are shown whole, long ones by their naming line.
    """
    leaf = field.rsplit(".", 1)[-1]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    hits = sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if (isinstance(node, ast.Constant) and node.value == leaf)
            or (isinstance(node, ast.keyword) and node.arg == leaf)
        }
    )
    if not hits:
        return None
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    spans: list[tuple[int, int]] = []
    for line in hits:
        span = _innermost_span(statements, line)
        if span not in spans:
            spans.append(span)
    lines = code.splitlines()
    snippets = [
        "\n".join(f"{n:>4}  {lines[n - 1].rstrip()}" for n in range(start, end + 1))
        for start, end in spans[:MAX_SNIPPETS]
    ]
    more = len(spans) - MAX_SNIPPETS
    return "\n".join(snippets) + (f"\n      … {more} more places" if more > 0 else "")


def _innermost_span(statements: list[ast.stmt], line: int) -> tuple[int, int]:
    """The smallest short statement around `line`, else the line alone."""
    around = [
        (s.lineno, s.end_lineno or s.lineno)
        for s in statements
        if s.lineno <= line <= (s.end_lineno or s.lineno)
    ]
    short = [span for span in around if span[1] - span[0] < MAX_STATEMENT_LINES]
    return min(short, key=lambda span: span[1] - span[0]) if short else (line, line)
