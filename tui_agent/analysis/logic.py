"""Where a field comes from in code: the lines that compute it (for the feedback modal and the
refinement prompt).

A line gives the field (its name: the last part of a dotted name) a value when it assigns to a
subscript (`item["total"] = ...`), holds it as a dict key (`{"total": expr}`) or a keyword
argument (`dict(total=...)`), or assigns a variable of that name (`total = ...`). Lines that
compute it win over lines that only hold data (a literal value: `{"total": None}` in a list of
records); data lines are shown when nothing computes the field. A value that is a variable is
followed back to the lines assigning it (in the same function, a few steps deep). With no such
line, the lines that merely name the field (reading it) are shown.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

MAX_STATEMENT_LINES = 4
MAX_SNIPPETS = 4
FOLLOW_DEPTH = 3
"""How many variables deep a value is followed back to its assignment."""

_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True)
class _Site:
    """A place that gives the field a value: the node holding it and the value (None when
    the value is not one expression, as in `total += x`'s target)."""

    node: ast.AST
    value: ast.expr | None
    computed: bool


def field_logic(code: str, field: str, *, reads: bool = True) -> str | None:
    """The lines of `code` that produce `field`, numbered; None if no line names it (or, with
    `reads` False, if no line gives it a value).

    Short statements are shown whole, long ones by the line that gives the value.
    """
    leaf = field.rsplit(".", 1)[-1]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    sites = list(_sites(tree, leaf))
    computing = [site for site in sites if site.computed]
    chosen: list[ast.AST] = [site.node for site in computing or sites]
    for site in computing:
        chosen += _followed(site, parents)
    if not chosen and reads:
        chosen = [
            node for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value == leaf
        ]
    if not chosen:
        return None
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    spans = _disjoint({_span(statements, node) for node in chosen})
    lines = code.splitlines()
    snippets = [
        "\n".join(f"{n:>4}  {lines[n - 1].rstrip()}" for n in range(start, end + 1))
        for start, end in spans[:MAX_SNIPPETS]
    ]
    more = len(spans) - MAX_SNIPPETS
    return "\n".join(snippets) + (f"\n      … {more} more places" if more > 0 else "")


def _sites(tree: ast.Module, leaf: str) -> Iterator[_Site]:
    """Every place that gives `leaf` a value."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(_assigns(t, leaf) for t in targets):
                computed = isinstance(node, ast.AugAssign) or not _literal(node.value)
                yield _Site(node, node.value, computed)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == leaf:
                    yield _Site(key, value, not _literal(value))
        elif isinstance(node, ast.keyword) and node.arg == leaf:
            yield _Site(node, node.value, not _literal(node.value))


def _assigns(target: ast.expr, leaf: str) -> bool:
    """Whether assigning to `target` sets `leaf`: `x["leaf"]`, the variable `leaf`, or one of
    them in a tuple."""
    if isinstance(target, ast.Subscript):
        return isinstance(target.slice, ast.Constant) and target.slice.value == leaf
    if isinstance(target, ast.Name):
        return target.id == leaf
    if isinstance(target, ast.Tuple | ast.List):
        return any(_assigns(element, leaf) for element in target.elts)
    return False


def _literal(value: ast.expr) -> bool:
    """Whether `value` is data: a constant, or a container of constants."""
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _followed(site: _Site, parents: dict[ast.AST, ast.AST]) -> list[ast.AST]:
    """The statements assigning the variable `site` puts in the field, and theirs in turn
    (FOLLOW_DEPTH deep), in the scope around the site."""
    found: list[ast.AST] = []
    value, node, seen = site.value, site.node, set()
    for _ in range(FOLLOW_DEPTH):
        if not isinstance(value, ast.Name) or value.id in seen:
            break
        seen.add(value.id)
        bindings = _bindings(_scope(node, parents), value.id)
        found += bindings
        last = bindings[-1] if bindings else None
        value = last.value if isinstance(last, ast.Assign | ast.AnnAssign) else None
        node = last or node
    return found


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> _Scope:
    while not isinstance(node, _Scope):
        node = parents[node]
    return node


def _bindings(scope: _Scope, name: str) -> list[ast.stmt]:
    """The statements of `scope` (not of functions inside it) assigning the variable `name`."""
    found: list[ast.stmt] = []
    pending: list[ast.AST] = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, _Scope | ast.ClassDef):
            continue
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_names(target, name) for target in targets):
                found.append(node)
        elif isinstance(node, ast.For | ast.AsyncFor) and _names(node.target, name):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda statement: statement.lineno)


def _names(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Tuple | ast.List | ast.Starred):
        elements = target.elts if not isinstance(target, ast.Starred) else [target.value]
        return any(_names(element, name) for element in elements)
    return False


def _span(statements: list[ast.stmt], node: ast.AST) -> tuple[int, int]:
    """The lines to show for `node`: a short statement whole (a `for` by its header line),
    else the smallest short statement around its first line, else that line."""
    line = getattr(node, "lineno", 1)
    if isinstance(node, ast.For | ast.AsyncFor):
        return line, line
    around = [
        (s.lineno, s.end_lineno or s.lineno)
        for s in statements
        if s.lineno <= line <= (s.end_lineno or s.lineno)
    ]
    short = [span for span in around if span[1] - span[0] < MAX_STATEMENT_LINES]
    return min(short, key=lambda span: span[1] - span[0]) if short else (line, line)


def _disjoint(spans: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans in line order, without those inside another."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if not any(start >= s and end <= e for s, e in kept):
            kept.append((start, end))
    return kept
