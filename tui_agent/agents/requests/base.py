"""What every session request shares: how a field is shown (`Option`), the error that names
its field (`RequestError`), and the field types whose bounds and choices are declared once.

A request field is `Annotated[type, Option(...)]`: the type carries its bounds and choices
(`Count`, `Seconds`, `Usd`, a `Literal`), the `Option` how the CLI and the TUI's form show it.
A problem is a sentence in domain words; it may name fields as `{field_name}`, which each
front end words its own way (`--max-steps` on the command line, "Max steps" on the form).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import UnionType
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    Self,
    Union,
    get_args,
    get_origin,
)

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo

from tui_agent.errors import UserError

Reader = Literal["text_file", "json_object_file", "recipe_file", "workflow_file"]
"""How a front end's path becomes the field's value (see readers.py)."""
MAX_WAIT = 600.0
"""The longest wait for a page to render (seconds)."""
_REFERENCE = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class RequestError(UserError):
    """A request that cannot start: the field it is about (None: the request as a whole) and
    the problem, a sentence that may name fields as `{field_name}` (see `worded`).

    `unset`: the field is empty and nothing is configured for it either (front ends add how
    to give one: a flag or a variable, a form field). `str()` is "<field>: <problem>".
    """

    def __init__(self, field: str | None, problem: str, *, unset: bool = False) -> None:
        self.field = field
        self.problem = problem
        self.unset = unset
        super().__init__(self.__str__())

    def __str__(self) -> str:
        sentence = self.worded(lambda name: name)
        return f"{self.field}: {sentence}" if self.field else sentence

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, keywords and all (worker processes)
        return (_rebuilt, (self.field, self.problem, self.unset))

    def worded(self, name_of: Callable[[str], str]) -> str:
        """The problem with each `{field}` it names replaced by `name_of(field)`."""
        return _REFERENCE.sub(lambda found: name_of(found.group(1)), self.problem)


def _rebuilt(field: str | None, problem: str, unset: bool) -> RequestError:
    return RequestError(field, problem, unset=unset)


@dataclass(frozen=True)
class Option:
    """How the front ends show one request field; declared once, next to its type.

    `flag` ("--max-steps"; None: a positional argument named `metavar`), `metavar` and `help`
    are the CLI's (`{default}` in the help is the field's default); `label`, `placeholder` and
    `row` the form's (no label: CLI only; fields sharing a row sit side by side). A `reader`
    turns the path the user gives into the value, and `keeps_path` names the field that keeps
    the path for display. `setting`: None means "as the settings say" (the Settings attribute
    of the same name, variable TUI_AGENT_<NAME>); `common`: every command already takes the
    flag (--model, --api-base). `items`: "json_literal" decodes each item of a list as a JSON
    literal when it is one. `url`: the form adds http:// to a bare host. `choice_labels`: the
    form's words for some choices (None: the default's own words).
    """

    help: str
    flag: str | None = None
    metavar: str | None = None
    label: str | None = None
    placeholder: str = ""
    row: str | None = None
    reader: Reader | None = None
    keeps_path: str | None = None
    setting: bool = False
    common: bool = False
    items: Literal["json_literal"] | None = None
    url: bool = False
    choice_labels: Mapping[Any, str] = field(default_factory=dict)

    @property
    def on_form(self) -> bool:
        return self.label is not None


@dataclass(frozen=True)
class Problem:
    """The problem said when a value breaks its type's bounds or cannot be read as one."""

    text: str


Count = Annotated[int, Field(ge=1), Problem("must be at least 1")]
"""Steps, attempts, items, tool calls: a whole number, at least 1."""
Seconds = Annotated[float, Field(gt=0), Problem("must be a positive number of seconds")]
Usd = Annotated[float, Field(gt=0), Problem("must be a positive amount of USD")]
WaitSeconds = Annotated[
    float,
    Field(gt=0, le=MAX_WAIT),
    Problem(f"must be more than 0 and at most {MAX_WAIT:g} seconds"),
]
Planner = Literal["auto", "llm", "offline"]
"""auto: the model when one is configured (given the offline findings), else offline."""
ToolProtocol = Literal["auto", "native", "text"]
""""auto": native tool calls when the model has them, else the text protocol."""


def non_blank(problem: str) -> AfterValidator:
    """A text that must hold more than spaces; `problem` is said otherwise."""

    def check(value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise RequestError(info.field_name, problem)
        return value

    return AfterValidator(check)


class RequestBase(BaseModel):
    """A session request: frozen plain data, JSON in and out exactly (`to_json`).

    Fields whose Option says `setting` are None for "as the settings say"; `resolved` fills
    them in. `approval_unit` names what each approval is for ("run", "program") in kinds that
    ask before running model-written code; `summary` says what the kind does, in words.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="constants")

    kind: str
    approval_unit: ClassVar[str | None] = None
    conversational: ClassVar[bool] = False
    """Its session is a conversation: it takes follow-ups, continues and forks."""
    summary: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        """The request as JSON data (parse_request reads it back to an equal request)."""
        return self.model_dump(mode="json")

    def resolved(self, settings: Any) -> Self:
        """This request with every settings-backed field left None taken from `settings`."""
        update = {
            name: getattr(settings, name)
            for name, option in field_options(type(self))
            if option.setting and getattr(self, name) is None
        }
        return self.model_copy(update=update) if update else self


def field_options(cls: type[BaseModel]) -> Iterator[tuple[str, Option]]:
    """(name, Option) of each field of `cls` that front ends show, in declaration order."""
    for name, info in cls.model_fields.items():
        option = next((m for m in info.metadata if isinstance(m, Option)), None)
        if option is not None:
            yield name, option


def field_problem(cls: type[BaseModel], name: str) -> str | None:
    """The Problem declared by the type of field `name` (through Optional and Annotated)."""
    info = cls.model_fields.get(name)
    if info is None:
        return None
    found = [m for m in info.metadata if isinstance(m, Problem)]
    found += list(_problems(info.annotation))
    return found[0].text if found else None


def _problems(annotation: Any) -> Iterator[Problem]:
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        yield from (m for m in metadata if isinstance(m, Problem))
        yield from _problems(base)
    elif get_origin(annotation) in (Union, UnionType):
        for arg in get_args(annotation):
            yield from _problems(arg)


def choices_of(annotation: Any) -> tuple[Any, ...]:
    """The values a Literal field takes (through Optional and Annotated); () when it is free."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) in (Annotated, Union, UnionType):
        for arg in get_args(annotation):
            found = choices_of(arg)
            if found:
                return found
    return ()


def base_type(annotation: Any) -> Any:
    """The type a field holds with Optional and Annotated taken away (`int`, `list`, a
    Literal's first value's type)."""
    if get_origin(annotation) is Annotated:
        return base_type(get_args(annotation)[0])
    if get_origin(annotation) in (Union, UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return base_type(kept[0]) if len(kept) == 1 else annotation
    if get_origin(annotation) is Literal:
        return type(get_args(annotation)[0])
    return get_origin(annotation) or annotation
