"""Whether a refined version resolved the user's field feedback.

Rules, per issue (coverage is populated / items, 0..1, of the field in an analysis):

- missing: the coverage reaches the target (80 % by default).
- wrong / format: the coverage did not fall, the field's kinds are consistent (not mixed), every
  given example's expected output appears (in the item whose values hold the example's input,
  when some item does), the correct value appears, and every populated value fully matches the
  correct pattern. With none of examples, value or pattern given there is nothing to verify
  against: a change of the field's values is "changed, not verified" (with before and after
  values of a few items), never "fixed"; no change is not fixed.
- partial: the coverage rises (or is complete) and the kinds are consistent.

Evidence the user gave (examples, correct value, correct pattern, and a correct expression over
the items' fields such as `qty * price`, computed per item) is checked for every issue. A
correct expression that reads anything but the items' fields is guidance for the model only.
Values compare loosely: equal, equal as stripped text, or equal as numbers ("249" == 249.0; a
computed number also within a relative 1e-9).

A check that is not resolved is never called "not fixed" when the field got better (`judge`):
more items agree with the evidence, or (the agreement unchanged or unknown) the coverage rose.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tui_agent.analysis.expression import ExpressionError, FieldExpression, field_expression
from tui_agent.analysis.flatten import flatten_item, is_empty
from tui_agent.analysis.shapes import ChangeVerdict, FeedbackExample, FieldFeedback, OutputAnalysis

SAMPLES = 3
"""Items whose before and after values an unverified change shows."""
SAMPLE_WIDTH = 40
"""Characters of one sample value shown in a version's summary."""


def _cut(value: Any, limit: int) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class FieldCheck:
    """The verdict on one feedback item: coverages before and after, and why."""

    field: str
    issue: str
    resolved: bool
    """Done as far as can be told: fixed, or (nothing to verify against) changed."""
    before: float
    """Coverage 0..1 of the field before the change."""
    after: float
    """Coverage 0..1 of the field after it."""
    detail: str
    verified: bool = True
    """False when the field changed but nothing the user gave could confirm it is right."""
    samples: tuple[tuple[Any, Any], ...] = ()
    """(before, after) values of the first few items, for an unverified change."""
    matched: tuple[int, int] | None = None
    """How many items (values, examples) agreed with the user's evidence before and after;
    None without evidence or without the items before."""

    @property
    def verdict(self) -> ChangeVerdict:
        """The check's verdict (`judge`)."""
        return judge(self.resolved, self.verified, self.before, self.after, self.matched)

    def samples_text(self, limit: int = SAMPLE_WIDTH) -> str:
        """ "'Kitchen' -> 'Northwind Goods', 'Home' -> 'Granite Works'": the before and after
        values of the samples, each cut to `limit` characters."""
        return ", ".join(f"{_cut(old, limit)} -> {_cut(new, limit)}" for old, new in self.samples)


def judge(
    resolved: bool,
    verified: bool,
    before: float,
    after: float,
    matched: tuple[int, int] | None = None,
) -> ChangeVerdict:
    """The one rule for a field's verdict.

    Resolved: "fixed", or "changed, not verified" (nothing to verify it against). Else by the
    agreement with the user's evidence (`matched`, before and after) when it moved, else by
    the coverage: higher is "improved", lower "worse", no change "not fixed".
    """
    if resolved:
        return "fixed" if verified else "changed, not verified"
    was, now = (matched[0], matched[1]) if matched and matched[0] != matched[1] else (before, after)
    if now > was:
        return "improved"
    return "worse" if now < was else "not fixed"


def coverage(analysis: OutputAnalysis | None, field: str) -> Fraction:
    """The exact share of records in which `field` is populated (0 when absent)."""
    if analysis is None or not analysis.item_count:
        return Fraction(0)
    definition = analysis.field(field)
    if definition is None:
        return Fraction(0)
    return Fraction(definition.populated, analysis.item_count)


def percent(share: Fraction | float) -> str:
    """A coverage as a whole percentage, e.g. "80%"."""
    return f"{round(float(share) * 100)}%"


def check_feedback(
    feedback: FieldFeedback,
    before: OutputAnalysis | None,
    after: OutputAnalysis,
    items: list[Any],
    *,
    target_coverage: float = 0.8,
    before_items: list[Any] | None = None,
) -> FieldCheck:
    """Whether `feedback` is resolved by the output `items` (analysed as `after`);
    `before_items` (the output before) give an unverified change its sample values and the
    agreement with the evidence before."""
    name = feedback.field
    was, now = coverage(before, name), coverage(after, name)
    records = _records(items)
    earlier = _records(before_items) if before_items is not None else None
    expression = evidence_expression(feedback, records + (earlier or []))
    evidence = _Evidence(feedback, expression)
    problems = evidence.problems(records)
    if feedback.issue == "missing":
        if now < Fraction(target_coverage).limit_denominator(10_000):
            problems.insert(
                0, f"coverage {percent(now)} is below the {percent(target_coverage)} target"
            )
    elif feedback.issue == "partial":
        if now <= was and now < 1:
            problems.insert(0, f"coverage did not rise ({percent(was)} -> {percent(now)})")
        problems.extend(_mixed(after, name))
    else:
        if now < was:
            problems.insert(0, f"coverage fell ({percent(was)} -> {percent(now)})")
        problems.extend(_mixed(after, name))
        if not evidence.given and not problems:
            if not _changed(before, after, name, before_items, items):
                problems.append("its values did not change")
            else:
                samples = value_samples(before_items or [], items, name)
                head = f"{name} ({feedback.issue}): {percent(was)} -> {percent(now)}"
                shown = "; ".join(f"{old!r} -> {new!r}" for old, new in samples)
                detail = f"{head}, changed, not verified" + (f" ({shown})" if shown else "")
                return FieldCheck(
                    name, feedback.issue, True, float(was), float(now), detail, False, samples
                )
    matched = None
    if evidence.given and earlier is not None:
        matched = (evidence.agreeing(earlier), evidence.agreeing(records))
    verdict = judge(not problems, True, float(was), float(now), matched)
    head = f"{name} ({feedback.issue}): {percent(was)} -> {percent(now)}"
    detail = f"{head}, {verdict}" + (f": {'; '.join(problems)}" if problems else "")
    return FieldCheck(
        name, feedback.issue, not problems, float(was), float(now), detail, matched=matched
    )


def evidence_expression(
    feedback: FieldFeedback, records: Iterable[dict[str, Any]]
) -> FieldExpression | None:
    """The feedback's correct expression when it reads only fields of `records` (flattened
    items), so it can be computed per item; None when there is none or it is guidance only."""
    if not feedback.correct_expression:
        return None
    fields = {name for record in records for name in record}
    return field_expression(feedback.correct_expression, fields)


def regressions(
    before: OutputAnalysis | None, after: OutputAnalysis, ignore: Iterable[str] = ()
) -> list[str]:
    """The fields of `before` whose coverage is lower in `after` (except those in `ignore`)."""
    if before is None:
        return []
    skipped = set(ignore)
    return [
        f.name
        for f in before.fields
        if f.name not in skipped and coverage(after, f.name) < coverage(before, f.name)
    ]


def _records(items: list[Any]) -> list[dict[str, Any]]:
    return [flatten_item(item) for item in items if isinstance(item, dict)]


def _field_values(items: list[Any], name: str) -> list[Any]:
    return [record.get(name) for record in _records(items)]


class _Evidence:
    """What the user gave to check a field against: examples, a correct value, a correct
    pattern, a correct expression over the items' fields."""

    def __init__(self, feedback: FieldFeedback, expression: FieldExpression | None) -> None:
        self.feedback = feedback
        self.expression = expression
        self.given = bool(
            feedback.examples or feedback.correct_value or feedback.correct_pattern or expression
        )

    def problems(self, records: list[dict[str, Any]]) -> list[str]:
        """What the evidence says is still wrong in `records`."""
        feedback, name = self.feedback, self.feedback.field
        values = [record.get(name) for record in records]
        problems = [
            _missing_example(example)
            for example in feedback.examples
            if not _example_holds(example, name, records, values)
        ]
        if feedback.correct_value and not any(_same(v, feedback.correct_value) for v in values):
            problems.append(f"the correct value {feedback.correct_value!r} does not appear")
        if feedback.correct_pattern:
            problems.extend(_pattern_problems(feedback.correct_pattern, values))
        if self.expression is not None:
            problems.extend(_expression_problems(self.expression, name, records))
        return problems

    def agreeing(self, records: list[dict[str, Any]]) -> int:
        """How many examples, values and items of `records` agree with the evidence."""
        feedback, name = self.feedback, self.feedback.field
        values = [record.get(name) for record in records]
        count = sum(_example_holds(e, name, records, values) for e in feedback.examples)
        if feedback.correct_value:
            count += sum(_same(v, feedback.correct_value) for v in values)
        if feedback.correct_pattern:
            count += len(_pattern_matches(feedback.correct_pattern, values))
        if self.expression is not None:
            count += sum(_holds(self.expression, name, record) is True for record in records)
        return count


def _holds(expression: FieldExpression, name: str, record: dict[str, Any]) -> bool | None:
    """Whether the item's value of `name` is what `expression` computes for it (None when it
    cannot be computed for the item)."""
    try:
        wanted = expression.evaluate(record)
    except ExpressionError:
        return None
    return _equal(record.get(name), wanted)


def _expression_problems(
    expression: FieldExpression, name: str, records: list[dict[str, Any]]
) -> list[str]:
    wrong: list[tuple[int, dict[str, Any]]] = []
    computed, why = 0, ""
    for index, record in enumerate(records):
        holds = _holds(expression, name, record)
        if holds is None:
            why = why or _failure(expression, record)
            continue
        computed += 1
        if not holds:
            wrong.append((index, record))
    if not computed:
        return [f"{expression.text} could not be computed for any item ({why})"]
    if not wrong:
        return []
    index, record = wrong[0]
    example = f"item {index + 1}: {record.get(name)!r}, expected {expression.evaluate(record)!r}"
    return [f"{len(wrong)} of {computed} items do not hold {expression.text} (e.g. {example})"]


def _failure(expression: FieldExpression, record: dict[str, Any]) -> str:
    try:
        expression.evaluate(record)
    except ExpressionError as exc:
        return str(exc)
    return ""


def _equal(value: Any, wanted: Any) -> bool:
    """`_same`, and numbers within a relative 1e-9 (a computed 59.970000000000006 is 59.97)."""
    if _same(value, wanted):
        return True
    numbers = [_as_number(v) for v in (value, wanted)]
    if None in numbers:
        return False
    a, b = numbers
    assert a is not None and b is not None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or is_empty(value):
        return None
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _missing_example(example: FeedbackExample) -> str:
    wanted = f"expected {example.expected_output!r}"
    return wanted if is_empty(example.input) else f"{wanted} for {example.input!r}"


def _example_holds(
    example: FeedbackExample, name: str, records: list[dict[str, Any]], values: list[Any]
) -> bool:
    """The expected output appears in the items (flattened) holding the example's input (if
    any do), else anywhere in the field."""
    if not is_empty(example.input):
        holders = [
            record
            for record in records
            if any(_same(v, example.input) for key, v in record.items() if key != name)
        ]
        if holders:
            return any(_same(record.get(name), example.expected_output) for record in holders)
    return any(_same(value, example.expected_output) for value in values)


def _pattern_matches(pattern: str, values: list[Any]) -> list[Any]:
    """The populated values fully matching `pattern` (none when it does not compile)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return []
    return [v for v in values if not is_empty(v) and compiled.fullmatch(str(v).strip())]


def _pattern_problems(pattern: str, values: list[Any]) -> list[str]:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return [f"the correct pattern {pattern!r} is not a valid regular expression ({exc})"]
    populated = [value for value in values if not is_empty(value)]
    bad = [value for value in populated if not compiled.fullmatch(str(value).strip())]
    if not populated:
        return [f"no value to match {pattern!r}"]
    if bad:
        return [f"{len(bad)} of {len(populated)} values do not match {pattern!r} (e.g. {bad[0]!r})"]
    return []


def _mixed(analysis: OutputAnalysis, name: str) -> list[str]:
    definition = analysis.field(name)
    if definition is None or not definition.mixed:
        return []
    kinds = ", ".join(f"{kind} {count}" for kind, count in definition.type_counts.items())
    return [f"its values are of mixed kinds ({kinds})"]


def _changed(
    before: OutputAnalysis | None,
    after: OutputAnalysis,
    name: str,
    before_items: list[Any] | None,
    items: list[Any],
) -> bool:
    """Whether the field's values differ: item by item when the items before are known,
    else by the analyses' examples."""
    if before_items is not None:
        return _field_values(before_items, name) != _field_values(items, name)
    old = before.field(name) if before is not None else None
    new = after.field(name)
    old_examples = old.examples if old is not None else []
    new_examples = new.examples if new is not None else []
    return new_examples != old_examples


def value_samples(before: list[Any], after: list[Any], name: str) -> tuple[tuple[Any, Any], ...]:
    """(before, after) values of `name` in the first items, the ones that changed first."""
    old, new = _field_values(before, name), _field_values(after, name)
    pairs = list(zip(old, new, strict=False))
    changed = [pair for pair in pairs if not _same(*pair)]
    return tuple((changed + [p for p in pairs if p not in changed])[:SAMPLES])


def _same(value: Any, expected: Any) -> bool:
    """Loose equality: equal, equal stripped texts, or equal numbers."""
    if value == expected and type(value) is type(expected):
        return True
    if is_empty(value) or is_empty(expected):
        return False
    if isinstance(value, bool) or isinstance(expected, bool):
        return str(value).strip().lower() == str(expected).strip().lower()
    left, right = str(value).strip(), str(expected).strip()
    if left == right:
        return True
    try:
        return float(left) == float(right)
    except ValueError:
        return False
