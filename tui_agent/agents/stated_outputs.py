"""Printed lines checked against what the code itself says they should be.

Models test their code with `print(f(x))  # Expected: 5` (or `# Output: ...`, `# -> ...`), or
print an example of a docstring of theirs (`>>> f(x)` above its result), and then answer
without comparing. When every line a run printed comes from one of its top-level `print`
calls, one line each and in order, `mismatches` names each call whose line differs from the
Python literal its comment states, else the result a docstring example of the code gives for
the same expression. Anything less certain (prints inside functions or loops, a stated value
that is not a literal, a count that does not match) is no mismatch.
"""

from __future__ import annotations

import ast
import doctest
import math
import re
from dataclasses import dataclass
from typing import Any

_STATED = re.compile(
    r"#\s*(?:expected(?:\s+output)?|output|should\s+(?:print|be|return)|returns?|->|=>)"
    r"\s*[:=]?\s*(?P<value>\S.*?)\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mismatch:
    """Line `line` of the code printed `printed`, where its comment states `stated`."""

    line: int
    printed: str
    stated: str
    source: str = "its comment"
    """Where the code states it: its comment, or "the docstring of NAME"."""

    def note(self) -> str:
        return (
            f"line {self.line} printed {self.printed!r}, but {self.source} says it should be "
            f"{self.stated}"
        )


def mismatches(code: str, printed: list[str]) -> list[Mismatch]:
    """The top-level prints of `code` whose `printed` line differs from the value their
    comment states (see the module docstring for when none are judged)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    prints = [node for node in tree.body if _is_print(node)]
    every_print = sum(_is_print_call(node) for node in ast.walk(tree))
    if not prints or every_print != len(prints) or len(printed) != len(prints):
        return []
    lines = code.splitlines()
    examples = _docstring_examples(tree)
    found: list[Mismatch] = []
    for node, line in zip(prints, printed, strict=True):
        end = node.end_lineno or node.lineno
        comment = _STATED.search(lines[end - 1][node.end_col_offset or 0 :])
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        if comment is not None:
            stated, source = comment.group("value"), "its comment"
        elif (example := examples.get(ast.unparse(node.value.args[0]))) is not None:
            stated, source = example
        else:
            continue
        value = _literal(stated)
        if value is not _NOT_A_LITERAL and not _same(line.strip(), value):
            found.append(Mismatch(node.lineno, line.strip(), stated, source))
    return found


def _docstring_examples(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Per expression (as `ast.unparse` writes it), the result a docstring example of the
    code's functions shows for it, and which function's docstring."""
    parser = doctest.DocTestParser()
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        try:
            examples = parser.get_examples(ast.get_docstring(node) or "")
        except ValueError:  # a docstring doctest cannot read is no example
            continue
        for example in examples:
            expression = _expression(example.source)
            if expression is not None and example.want.strip():
                found[expression] = (example.want.strip(), f"the docstring of {node.name}")
    return found


def _expression(source: str) -> str | None:
    """The one expression `source` is, as `ast.unparse` writes it (None: it is not one)."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    return ast.unparse(body[0].value)


def _is_print(node: ast.stmt) -> bool:
    """`print(one_value)` as a statement of its own, with no `sep`, `end` or `file`."""
    return (
        isinstance(node, ast.Expr)
        and _is_print_call(node.value)
        and isinstance(node.value, ast.Call)
        and len(node.value.args) == 1
        and not node.value.keywords
        and not isinstance(node.value.args[0], ast.Starred)
    )


def _is_print_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )


_NOT_A_LITERAL = object()


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_A_LITERAL


def _same(printed: str, value: Any) -> bool:
    if printed in (str(value), repr(value)):
        return True
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return math.isclose(float(printed), float(value), rel_tol=1e-6, abs_tol=1e-9)
        except ValueError:
            return False
    return False
