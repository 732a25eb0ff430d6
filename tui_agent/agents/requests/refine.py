"""The request of a refinement: feedback on one field of a recorded session, and its limits.

A refinement appends to the session it refines rather than starting one; its request is
declared and checked like every other (the CLI's flags come from it).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, field_validator

from tui_agent.agents.requests.base import Count, Option, RequestBase, RequestError, non_blank
from tui_agent.agents.requests.fields import (
    ApiBase,
    ContextTokens,
    MaxTokens,
    Temperature,
    TopP,
)
from tui_agent.agents.requests.readers import decode_literal
from tui_agent.analysis.shapes import FeedbackExample, FeedbackIssue, FieldFeedback
from tui_agent.config import IsolatedSandboxName


def example_of(value: Any) -> Any:
    """`IN=>OUT` as an example, each side a JSON literal when it is one, else text; any
    other value is left for the model to check."""
    if not isinstance(value, str):
        return value
    if "=>" not in value:
        raise RequestError("examples", f"{{examples}} {value!r} is not IN=>OUT (e.g. 'USD 5=>5.0')")
    given, expected = (side.strip() for side in value.split("=>", 1))
    if not expected:
        raise RequestError("examples", f"{{examples}} {value!r} has no expected output after =>")
    return FeedbackExample(
        input=decode_literal(given) if given else None, expected_output=decode_literal(expected)
    )


class RefineRequest(RequestBase):
    """`tui-agent refine SESSION --field F --issue I ...`: fix a field of a recorded session."""

    kind: Literal["refine"] = "refine"
    summary: ClassVar[str] = "fix a field of a recorded session from feedback"

    session: Annotated[str, Option("session id (or a unique prefix)", metavar="SESSION")]
    field: Annotated[
        str,
        Option("the field (column) to fix", flag="--field", metavar="F"),
        non_blank("{field} is empty: name the field to fix"),
    ]
    issue: Annotated[FeedbackIssue, Option("what is wrong with it", flag="--issue")]
    selector: Annotated[
        str | None,
        Option(
            "the correct CSS selector (`a.more@href` reads href)", flag="--selector", metavar="S"
        ),
    ] = None
    expression: Annotated[
        str | None,
        Option("the correct expression or logic", flag="--expression", metavar="E"),
    ] = None
    pattern: Annotated[
        str | None,
        Option("a regular expression every value matches", flag="--pattern", metavar="P"),
    ] = None
    looks_like: Annotated[
        str | None,
        Option(
            "what the values should look like, in words (told to the model, not checked)",
            flag="--looks-like",
            metavar="TEXT",
        ),
    ] = None
    value: Annotated[
        str | None,
        Option("a correct value the field must show", flag="--value", metavar="V"),
    ] = None
    notes: Annotated[
        str | None,
        Option("what the field should contain, in words", flag="--notes", metavar="N"),
    ] = None
    examples: Annotated[
        list[Annotated[FeedbackExample, BeforeValidator(example_of)]],
        Option(
            "an expected example (repeatable); JSON literals are decoded, else text",
            flag="--example",
            metavar="IN=>OUT",
        ),
    ] = []
    max_attempts: Annotated[
        Count | None,
        Option(
            "attempts at most (default: the refinement's own limit, 5)",
            flag="--max-attempts",
            metavar="N",
        ),
    ] = None
    sandbox: Annotated[
        IsolatedSandboxName | None,
        Option("where refined code runs (default: TUI_AGENT_SANDBOX or auto)", flag="--sandbox"),
    ] = None
    api_base: ApiBase = None
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None

    @field_validator("pattern")
    @classmethod
    def _a_regular_expression(cls, pattern: str | None) -> str | None:
        if pattern:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise RequestError(
                    "pattern",
                    f"{{pattern}} {pattern!r} is not a regular expression ({exc}); "
                    "to describe the values in words use {looks_like}",
                ) from None
        return pattern

    def feedback(self) -> FieldFeedback:
        """The feedback this request gives on its field."""
        return FieldFeedback(
            field=self.field.strip(),
            issue=self.issue,
            correct_selector=self.selector or None,
            correct_expression=self.expression or None,
            correct_pattern=self.pattern or None,
            value_description=self.looks_like or None,
            correct_value=self.value or None,
            notes=self.notes or None,
            examples=list(self.examples),
        )
