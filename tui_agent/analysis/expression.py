"""Expressions over an item's fields (`qty * price`), parsed and evaluated safely.

A correct value the user gives as an expression is computed per item and compared with the
item's value of the field. Only a small part of Python is accepted, checked on the syntax tree
before anything runs: literals, field names (a dotted name such as `offer.price` names a
nested field: it is looked up, never an attribute access), arithmetic, comparisons, `and` /
`or` / `not`, `a if c else b`, tuples and lists, and calls of a few functions (`ALLOWED_CALLS`)
with positional arguments. No attributes, subscripts, imports, lambdas or keyword arguments.
In arithmetic, numbers written as text count as numbers (`"3" * 2.5` is 7.5); results are
bounded in size.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ALLOWED_CALLS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "bool": bool,
    "float": float,
    "int": int,
    "len": len,
    "max": max,
    "min": min,
    "round": round,
    "str": str,
    "sum": sum,
}
"""The functions an expression may call, by name."""
MAX_TEXT = 10_000
"""The longest text or sequence an expression may build."""
MAX_EXPONENT = 1_000
MAX_BITS = 100_000
"""The largest whole number (in bits) a power may build."""
MAX_TEXT_INPUT = 500
"""The longest typed text treated as an expression."""

_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARISONS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}


class ExpressionError(ValueError):
    """An expression that is not allowed, or that cannot be computed for one item."""


@dataclass(frozen=True)
class FieldExpression:
    """A parsed expression and the field names it reads (dotted for nested fields)."""

    text: str
    tree: ast.expr
    names: tuple[str, ...]

    @property
    def is_literal(self) -> bool:
        """Whether it reads no field (a plain number, text or a sum of them)."""
        return not self.names

    def unknown(self, fields: Iterable[str]) -> list[str]:
        """The names it reads that are not among `fields`."""
        known = set(fields)
        return [name for name in self.names if name not in known]

    def evaluate(self, record: Mapping[str, Any]) -> Any:
        """Its value for one flattened item (`flatten_item`); ExpressionError when a field it
        reads is absent or an operation fails."""
        try:
            return _evaluate(self.tree, record)
        except ExpressionError:
            raise
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise ExpressionError(f"{type(exc).__name__}: {exc}") from None


def parse_expression(text: str) -> FieldExpression:
    """`text` as a FieldExpression; ExpressionError says what is not allowed."""
    source = text.strip()
    if not source or len(source) > MAX_TEXT_INPUT or "\n" in source:
        raise ExpressionError("not a one-line expression")
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"not an expression ({exc.msg})") from None
    names: list[str] = []
    _check(tree, names)
    return FieldExpression(source, tree, tuple(dict.fromkeys(names)))


def field_expression(text: str, fields: Iterable[str]) -> FieldExpression | None:
    """`text` as an expression over `fields` (it reads at least one field and only fields),
    or None when it is anything else (a literal, an unknown name, code not allowed)."""
    try:
        expression = parse_expression(text)
    except ExpressionError:
        return None
    if expression.is_literal or expression.unknown(fields):
        return None
    return expression


def dotted_name(node: ast.expr) -> str | None:
    """`offer.price` for a chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr}" if head is not None else None
    return None


def _check(node: ast.expr, names: list[str]) -> None:
    """Refuse (ExpressionError) any node outside the allowed part; collect the field names."""
    match node:
        case ast.Constant(value=value):
            if not isinstance(value, int | float | str | bool | type(None)):
                raise ExpressionError(f"the literal {value!r} is not allowed")
        case ast.Name(id=name):
            if name in ALLOWED_CALLS:
                raise ExpressionError(f"{name} is a function: call it, e.g. {name}(x)")
            names.append(name)
        case ast.Attribute():
            dotted = dotted_name(node)
            if dotted is None or dotted.split(".", 1)[0] in ALLOWED_CALLS:
                raise ExpressionError("attributes are not allowed (a.b only names a field)")
            names.append(dotted)
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _ARITHMETIC:
            _check(left, names)
            _check(right, names)
        case ast.UnaryOp(op=op, operand=operand) if type(op) in _UNARY:
            _check(operand, names)
        case ast.BoolOp(values=operands):
            for operand in operands:
                _check(operand, names)
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            if not all(type(comparison) in _COMPARISONS for comparison in ops):
                raise ExpressionError("only ==, !=, <, <=, >, >=, in and not in compare")
            for part in (left, *comparators):
                _check(part, names)
        case ast.IfExp(test=test, body=body, orelse=orelse):
            for part in (test, body, orelse):
                _check(part, names)
        case ast.Tuple(elts=elts) | ast.List(elts=elts):
            for element in elts:
                if isinstance(element, ast.Starred):
                    raise ExpressionError("* is not allowed")
                _check(element, names)
        case ast.Call(func=ast.Name(id=function), args=args, keywords=[]) if (
            function in ALLOWED_CALLS
        ):
            for argument in args:
                if isinstance(argument, ast.Starred):
                    raise ExpressionError("* is not allowed")
                _check(argument, names)
        case ast.Call():
            allowed = ", ".join(ALLOWED_CALLS)
            raise ExpressionError(f"only {allowed} may be called, with plain arguments")
        case _:
            raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")


def _evaluate(node: ast.expr, record: Mapping[str, Any]) -> Any:
    """The value of a node `_check` accepted."""
    match node:
        case ast.Constant(value=value):
            return value
        case ast.Name() | ast.Attribute():
            name = dotted_name(node)
            assert name is not None
            if name not in record:
                raise ExpressionError(f"the item has no field {name}")
            return record[name]
        case ast.BinOp(left=left, op=op, right=right):
            return _arithmetic(type(op), _evaluate(left, record), _evaluate(right, record))
        case ast.UnaryOp(op=op, operand=operand):
            value = _evaluate(operand, record)
            if not isinstance(op, ast.Not):
                value = _number(value)
            return _UNARY[type(op)](value)
        case ast.BoolOp(op=op, values=values):
            result: Any = None
            for part in values:
                result = _evaluate(part, record)
                if bool(result) is isinstance(op, ast.Or):
                    return result
            return result
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            current = _evaluate(left, record)
            for comparison, comparator in zip(ops, comparators, strict=True):
                following = _evaluate(comparator, record)
                a, b = (
                    (current, following)
                    if type(comparison) in (ast.In, ast.NotIn)
                    else (_numbers(current, following))
                )
                if not _COMPARISONS[type(comparison)](a, b):
                    return False
                current = following
            return True
        case ast.IfExp(test=test, body=body, orelse=orelse):
            return _evaluate(body if _evaluate(test, record) else orelse, record)
        case ast.Tuple(elts=elts):
            return tuple(_evaluate(e, record) for e in elts)
        case ast.List(elts=elts):
            return [_evaluate(e, record) for e in elts]
        case ast.Call(func=ast.Name(id=function), args=args):
            values = [_evaluate(a, record) for a in args]
            if function in ("round", "abs", "int", "float") and values:
                values[0] = _number(values[0])
            return _bounded(ALLOWED_CALLS[function](*values))
    raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")


def _arithmetic(op: type[ast.operator], left: Any, right: Any) -> Any:
    """`left op right`: numbers written as text count as numbers (except text + text)."""
    if not (op is ast.Add and isinstance(left, str) and isinstance(right, str)):
        left, right = _numbers(left, right)
    if op is ast.Pow and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
        raise ExpressionError(f"the exponent {right} is too large")
    if (
        op is ast.Pow
        and isinstance(left, int)
        and isinstance(right, int)
        and left.bit_length() * right > MAX_BITS
    ):
        raise ExpressionError("the result would be too large")
    if op is ast.Mult:
        for sequence, count in ((left, right), (right, left)):
            if (
                isinstance(sequence, str | list | tuple)
                and isinstance(count, int)
                and len(sequence) * count > MAX_TEXT
            ):
                raise ExpressionError("the result would be too long")
    return _bounded(_ARITHMETIC[op](left, right))


def _numbers(left: Any, right: Any) -> tuple[Any, Any]:
    """Both as numbers when both are numbers or numbers written as text; else unchanged."""
    a, b = _number(left), _number(right)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a, b
    return left, right


def _number(value: Any) -> Any:
    """A number written as text as that number (int or float); anything else unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or len(text) > 40:
        return value
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return value


def _bounded(value: Any) -> Any:
    if isinstance(value, str | list | tuple) and len(value) > MAX_TEXT:
        raise ExpressionError("the result is too long")
    return value


def first_value(
    expression: FieldExpression, records: Iterable[Mapping[str, Any]]
) -> tuple[int, Any] | None:
    """The first of `records` (flattened items) `expression` can be computed for: its index
    and the value; None when there is none."""
    for index, record in enumerate(records):
        try:
            return index, expression.evaluate(record)
        except ExpressionError:
            continue
    return None
