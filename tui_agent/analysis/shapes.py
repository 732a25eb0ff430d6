"""Data shapes of output analysis and of the user's field feedback."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FieldType = Literal["string", "number", "boolean", "url", "date"]
OutputType = Literal["array", "object", "primitive"]
FeedbackIssue = Literal["missing", "wrong", "partial", "format"]
AgentType = Literal["scraper", "transformer", "analyzer", "api-client", "generic"]
ChangeVerdict = Literal["fixed", "improved", "changed, not verified", "worse", "not fixed"]
"""A refined version's verdict on one field of the feedback (`resolution.judge` decides)."""

FEEDBACK_ISSUE_LABELS: dict[str, str] = {
    "missing": "No data extracted",
    "wrong": "Wrong data extracted",
    "partial": "Inconsistent results",
    "format": "Wrong format",
}


class FieldDefinition(BaseModel):
    """One detected field of a list of records."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: FieldType = "string"
    type_counts: dict[FieldType, int] = Field(default_factory=dict)
    mixed: bool = False
    required: bool = False
    coverage: int = 0
    populated: int = 0
    examples: list[Any] = Field(default_factory=list)


class OutputAnalysis(BaseModel):
    """What `analyze_output` says about a result."""

    model_config = ConfigDict(extra="forbid")

    type: OutputType
    is_structured: bool = False
    item_count: int = 0
    fields: list[FieldDefinition] = Field(default_factory=list)

    def field(self, name: str) -> FieldDefinition | None:
        """The field called `name`, if detected."""
        return next((f for f in self.fields if f.name == name), None)


class FeedbackExample(BaseModel):
    """An expected input -> output pair given by the user."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    expected_output: Any = None


class FieldFeedback(BaseModel):
    """The user's structured feedback on one field."""

    model_config = ConfigDict(extra="forbid")

    field: str
    issue: FeedbackIssue
    correct_value: str | None = None
    correct_selector: str | None = None
    correct_expression: str | None = None
    """Logic or an expression; one over the items' fields (`qty * price`) is computed per item
    and checked."""
    correct_pattern: str | None = None
    """A regular expression every populated value must fully match (checked)."""
    value_description: str | None = None
    """What the values should look like, in words (told to the model, not checked)."""
    request_parameters: str | None = None
    response_mapping: str | None = None
    notes: str | None = None
    examples: list[FeedbackExample] = Field(default_factory=list)
