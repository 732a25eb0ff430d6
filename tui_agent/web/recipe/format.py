"""Recipes: bindings plus a command vocabulary, as the RecipeWriter writes them.

A recipe file is one JSON object ``{"bindings": {...}, "recipe": {"id", "name", "commands",
"config": {"maxItems"}}}``. Commands name abstract targets ("page", "list", "details",
"next_page"); bindings map those to CSS selectors, so a broken selector is fixed in one place.
`load_recipe` validates a file and reports every problem with its JSON path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

from tui_agent.errors import UserError
from tui_agent.json_limits import JsonTooDeep
from tui_agent.json_limits import loads as bounded_loads

ClickBehavior = Literal["shows_panel", "navigates", "inline"]
Target = Literal["page", "list", "details"]
DEFAULT_TIMEOUT_MS = 10_000
MAX_REPEAT = 1_000
"""The most iterations a REPEAT may run (`times`, `maxIterations`), REPEATs nested in one
another counted together."""
MAX_RECIPE_BYTES = 1_000_000
"""The largest recipe file read (recipes are a few kilobytes)."""


class RecipeError(UserError):
    """A recipe that cannot be read or used: every problem with its JSON path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Condition(_Strict):
    """A page condition: a selector that is shown (`exists`) or not shown (`gone`)."""

    exists: str | None = Field(None, min_length=1, description="CSS selector of a shown element")
    gone: str | None = Field(None, min_length=1, description="CSS selector absent or hidden")

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.exists is None) == (self.gone is None):
            raise ValueError('a condition has exactly one of "exists" or "gone"')
        return self

    def describe(self) -> str:
        return f"exists {self.exists}" if self.exists is not None else f"gone {self.gone}"


class FieldSelector(_Strict):
    """A named field read from an element: its text, or one of its attributes; with `all`,
    from every element the selector matches, as a list (tags, categories)."""

    selector: str = Field(min_length=1)
    attribute: str | None = Field(None, min_length=1, description="read this attribute, not text")
    prefix: str | None = Field(
        None,
        min_length=1,
        description='a label written before the value in the same element ("Año: 2019"): '
        "dropped from the text read, with the colon after it",
    )
    all: bool = Field(
        False,
        description="read every shown match of the selector: a list of their values "
        "(null when none has one), for a field of several values such as tags",
    )

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A plain selector is written back as the string it was given as."""
        plain = self.attribute is None and self.prefix is None and not self.all
        return self.selector if plain else handler(self)


def _field_spec(value: Any) -> Any:
    if isinstance(value, str):
        return {"selector": value}
    if isinstance(value, dict):
        return value
    raise ValueError('expected a CSS selector or {"selector": ..., "attribute": ...}')


FieldSpec = Annotated[
    FieldSelector,
    BeforeValidator(_field_spec),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "minLength": 1, "description": "CSS selector (its text)"},
                {
                    "type": "object",
                    "properties": {
                        "selector": {"type": "string", "minLength": 1},
                        "attribute": {"type": "string", "minLength": 1},
                        "prefix": {"type": "string", "minLength": 1},
                        "all": {"type": "boolean"},
                    },
                    "required": ["selector"],
                    "additionalProperties": False,
                },
            ]
        }
    ),
]


class CloseDetails(_Strict):
    """How the details are closed before the next item: a control to click, or a key."""

    selector: str | None = Field(None, min_length=1, description="the close control")
    key: str | None = Field(None, min_length=1, description='a key to press, e.g. "Escape"')

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.selector is None) == (self.key is None):
            raise ValueError('CLOSE_DETAILS has exactly one of "selector" or "key"')
        return self

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A control is written back as the plain selector it was given as."""
        return self.selector if self.key is None else handler(self)

    def describe(self) -> str:
        return f"PRESS {self.key}" if self.key else f"`{self.selector}`"


def _close_spec(value: Any) -> Any:
    return {"selector": value} if isinstance(value, str) else value


CloseSpec = Annotated[
    CloseDetails,
    BeforeValidator(_close_spec),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "minLength": 1, "description": "the close control's selector"},
                {
                    "type": "object",
                    "properties": {"key": {"type": "string", "minLength": 1}},
                    "required": ["key"],
                    "additionalProperties": False,
                    "description": 'a key that closes the details, e.g. {"key": "Escape"}',
                },
            ]
        }
    ),
]


class Bindings(_Strict):
    """Abstract targets (LIST_ITEM, DETAILS_PANEL, ...) and named fields mapped to selectors."""

    LIST: str = Field("body", min_length=1, description="container of the list items")
    LIST_ITEM: str = Field(min_length=1, description="each item of the list")
    LIST_ITEM_SIBLINGS: Annotated[str, Field(min_length=1)] | Annotated[int, Field(ge=1)] | None = (
        Field(
            None,
            description="an item spread over sibling elements (a title row and a tag row, a dt and "
            "its dds): the following siblings of each LIST_ITEM that belong to it, as a selector "
            "(those matching it, up to the next LIST_ITEM) or a count (the next N)",
        )
    )
    DETAILS_PANEL: str | None = Field(None, min_length=1, description="where details appear")
    DETAILS_CONTENT: list[str] = Field(
        default_factory=list, description="selectors whose texts are extracted as `content`"
    )
    CLICK_BEHAVIOR: ClickBehavior = "shows_panel"
    PAGE_LOADED: Condition | None = None
    LIST_LOADED: Condition | None = None
    DETAILS_LOADED: Condition | None = None
    NEXT_PAGE_BUTTON: str | None = Field(
        None,
        min_length=1,
        validation_alias=AliasChoices("NEXT_PAGE_BUTTON", "PAGINATION_BUTTON"),
        description="the next-page button (pagination)",
    )
    DETAILS_FIELDS: dict[str, FieldSpec] = Field(
        default_factory=dict, description="named fields read inside the details (panel or page)"
    )
    ITEM_FIELDS: dict[str, FieldSpec] = Field(
        default_factory=dict, description="named fields read inside the list item itself"
    )
    NEXT_PAGE_TEXT: str | None = Field(
        None,
        min_length=1,
        description="the next-page control's text: among NEXT_PAGE_BUTTON's matches, the one "
        "reading it (else one that says next) is clicked, so a selector that names several "
        "controls still finds the right one on every page",
    )
    NEXT_PAGE_NUMBERED: bool = Field(
        False,
        description="the next page is the numbered link after the current page's number, "
        "among NEXT_PAGE_BUTTON's matches",
    )
    CLOSE_DETAILS: CloseSpec | None = Field(
        None,
        description="after each item: the control clicked (if shown) or the key pressed to "
        "close details that cover the list; the run waits until they are gone",
    )
    DETAILS_SCHEMA: dict[str, str] = Field(
        default_factory=dict,
        description="field name -> what it holds: the fields a model reads from the details' "
        'text when EXTRACT_DETAILS has "parse": true (selectors read first win)',
    )

    def page_loaded(self) -> Condition:
        return self.PAGE_LOADED or Condition(exists="body")

    def list_loaded(self) -> Condition:
        return self.LIST_LOADED or Condition(exists=self.LIST_ITEM)

    def details_loaded(self) -> Condition | None:
        if self.DETAILS_LOADED is not None:
            return self.DETAILS_LOADED
        return Condition(exists=self.DETAILS_PANEL) if self.DETAILS_PANEL else None


class _Command(_Strict):
    def arguments(self) -> dict[str, Any]:
        """The command as written in a recipe (bodies summarised by their length)."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if "body" in data:
            count = len(data["body"])
            data["body"] = f"{count} command" + ("s" if count != 1 else "")
        return data


class WaitFor(_Command):
    """Wait for a target's binding condition, or for an explicit condition."""

    type: Literal["WAIT_FOR"]
    target: Target | None = None
    condition: Condition | None = None
    changed: bool = Field(
        False,
        description='with target "list": wait until the list shows other items than before '
        "the action just run (a filter or sort that re-renders it)",
    )
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0, description="milliseconds")

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.target is None) == (self.condition is None):
            raise ValueError('WAIT_FOR has exactly one of "target" or "condition"')
        if self.changed and self.target != "list":
            raise ValueError('WAIT_FOR "changed" only goes with target "list"')
        return self


class ForEachItemInList(_Command):
    """Run `body` once for every list item not processed yet, re-finding items by identity."""

    type: Literal["FOR_EACH_ITEM_IN_LIST"]
    body: list[Command] = Field(min_length=1)
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0, description="ms to wait for a first item")


class Click(_Command):
    """Click the current item (no selector) or an element."""

    type: Literal["CLICK"]
    selector: str | None = Field(None, min_length=1)
    text: str | None = Field(
        None,
        min_length=1,
        description="click the first shown match of `selector` whose text is this (case and "
        'spacing aside, and a trailing count like "(12)")',
    )
    within: Literal["page", "item"] = Field("page", description="where `selector` is searched")
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0, description="milliseconds")

    @model_validator(mode="after")
    def _text_needs_selector(self) -> Self:
        if self.text is not None and self.selector is None:
            raise ValueError('CLICK "text" needs a "selector" to search')
        return self


class ExtractDetails(_Command):
    """Read the details: their text, DETAILS_CONTENT, DETAILS_FIELDS, ITEM_FIELDS, link."""

    type: Literal["EXTRACT_DETAILS"]
    parse: bool = Field(
        False,
        description="also have a model read DETAILS_SCHEMA's fields from the details' text "
        "(when a model is configured; cached per recipe and text)",
    )


class Save(_Command):
    """Save the extracted record as an item."""

    type: Literal["SAVE"]
    as_: str = Field("item", alias="as", min_length=1)


class MarkDone(_Command):
    """Mark the current item processed (done anyway when its body ends)."""

    type: Literal["MARK_DONE"]


class Scroll(_Command):
    """Scroll the list container or the page to its end and wait for the list to grow."""

    type: Literal["SCROLL"]
    target: Literal["list", "page"] = "page"
    timeout: int = Field(1_500, gt=0, description="ms to wait for new items after each try")
    tries: int = Field(2, ge=1, description="scrolls before concluding the list stopped growing")


class Repeat(_Command):
    """Run `body` `times` times, or until `until` holds or an iteration changes nothing."""

    type: Literal["REPEAT"]
    body: list[Command] = Field(min_length=1)
    times: int | None = Field(None, ge=1, le=MAX_REPEAT)
    until: Condition | None = None
    max_iterations: int = Field(MAX_REPEAT, alias="maxIterations", ge=1, le=MAX_REPEAT)

    @property
    def limit(self) -> int:
        """The most iterations it runs: `times`, else `maxIterations`."""
        return self.times or self.max_iterations


class ClickIfExists(_Command):
    """Click a shown, enabled button (default NEXT_PAGE_BUTTON) and wait for the list to change."""

    type: Literal["CLICK_IF_EXISTS"]
    target: Literal["next_page"] | None = None
    selector: str | None = Field(None, min_length=1)
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0, description="ms to wait for the list to change")

    @model_validator(mode="after")
    def _not_both(self) -> Self:
        if self.target is not None and self.selector is not None:
            raise ValueError('CLICK_IF_EXISTS has "target" or "selector", not both')
        return self


class End(_Command):
    """End the recipe."""

    type: Literal["END"]


class TypeText(_Command):
    """Fill an input with text."""

    type: Literal["TYPE"]
    selector: str = Field(min_length=1)
    text: str
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0)


class Select(_Command):
    """Choose an option of a <select> by value (or by label)."""

    type: Literal["SELECT"]
    selector: str = Field(min_length=1)
    value: str | None = None
    label: str | None = None
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0)

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.value is None) == (self.label is None):
            raise ValueError('SELECT has exactly one of "value" or "label"')
        return self


class Press(_Command):
    """Press a key (e.g. "Enter") on an element, or on the page."""

    type: Literal["PRESS"]
    key: str = Field(min_length=1)
    selector: str | None = Field(None, min_length=1)
    timeout: int = Field(DEFAULT_TIMEOUT_MS, gt=0)


Command = Annotated[
    WaitFor
    | ForEachItemInList
    | Click
    | ExtractDetails
    | Save
    | MarkDone
    | Scroll
    | Repeat
    | ClickIfExists
    | End
    | TypeText
    | Select
    | Press,
    Field(discriminator="type"),
]
COMMAND_TYPES = (
    "WAIT_FOR",
    "FOR_EACH_ITEM_IN_LIST",
    "CLICK",
    "EXTRACT_DETAILS",
    "SAVE",
    "MARK_DONE",
    "SCROLL",
    "REPEAT",
    "CLICK_IF_EXISTS",
    "END",
    "TYPE",
    "SELECT",
    "PRESS",
)
ITEM_COMMANDS = ("EXTRACT_DETAILS", "SAVE", "MARK_DONE")


class RecipeConfig(_Strict):
    max_items: int | None = Field(None, alias="maxItems", ge=1, description="stop after N items")


class Recipe(_Strict):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    commands: list[Command] = Field(min_length=1)
    config: RecipeConfig = Field(default_factory=RecipeConfig)


class RecipeFile(_Strict):
    """A recipe file: bindings and the recipe that uses them."""

    schema_: str | None = Field(None, alias="$schema")
    bindings: Bindings
    recipe: Recipe

    def to_json(self) -> dict[str, Any]:
        """The file as JSON data: what it set, without defaults it left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


for _model in (ForEachItemInList, Repeat):
    _model.model_rebuild()
_ADAPTER: TypeAdapter[RecipeFile] = TypeAdapter(RecipeFile)


def recipe_json_schema() -> dict[str, Any]:
    """The JSON Schema of a recipe file."""
    schema = RecipeFile.model_json_schema(by_alias=True)
    schema["title"] = "tui-agent recipe"
    return schema


def json_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a JSON path (`recipe.commands[2].body[0].selector`)."""
    path = ""
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(previous, int) and part in COMMAND_TYPES:
            pass  # the discriminator's branch name, not a key of the file
        else:
            path += f".{part}" if path else str(part)
        previous = part
    return path or "(top level)"


def _problems(
    bindings: Bindings,
    commands: list[Any],
    path: str,
    in_item: bool,
    extracted: bool = False,
    repeats: int = 1,
) -> list[str]:
    """What the commands need that the bindings or their place do not give, by JSON path
    (`repeats`: the iterations of the REPEATs they are nested in, multiplied)."""
    found: list[str] = []
    for index, command in enumerate(commands):
        where = f"{path}[{index}]"
        kind = command.type
        details = kind == "EXTRACT_DETAILS" or (kind == "WAIT_FOR" and command.target == "details")
        on_item = kind == "CLICK" and (command.selector is None or command.within == "item")
        if kind == "FOR_EACH_ITEM_IN_LIST" and in_item:
            found.append(f"{where}: FOR_EACH_ITEM_IN_LIST cannot be nested in another")
        elif (kind in ITEM_COMMANDS or details or on_item) and not in_item:
            found.append(f"{where}: {_label(command)} only works inside FOR_EACH_ITEM_IN_LIST")
        elif kind == "SAVE" and not extracted:
            found.append(f"{where}: SAVE needs an EXTRACT_DETAILS before it")
        if kind == "CLICK_IF_EXISTS" and command.selector is None and not bindings.NEXT_PAGE_BUTTON:
            found.append(f"{where}: CLICK_IF_EXISTS without a selector needs NEXT_PAGE_BUTTON")
        if details and bindings.CLICK_BEHAVIOR == "shows_panel" and not bindings.DETAILS_PANEL:
            found.append(f'{where}: {_label(command)} with "shows_panel" needs DETAILS_PANEL')
        extracted = extracted or kind == "EXTRACT_DETAILS"
        inner_repeats = repeats * command.limit if kind == "REPEAT" else repeats
        if kind == "REPEAT" and repeats > 1 and inner_repeats > MAX_REPEAT:
            found.append(
                f"{where}: REPEATs nested here run up to {inner_repeats:,} iterations (at most "
                f"{MAX_REPEAT:,} together: lower times or maxIterations)"
            )
        if kind in ("FOR_EACH_ITEM_IN_LIST", "REPEAT"):
            loop = kind == "FOR_EACH_ITEM_IN_LIST"
            inner = _problems(
                bindings,
                command.body,
                f"{where}.body",
                in_item or loop,
                extracted and not loop,
                inner_repeats,
            )
            found.extend(inner)
    return found


def _reason(error: Any) -> str:
    """A pydantic error's reason, worded for a recipe author."""
    context = error.get("ctx") or {}
    if error["type"] == "union_tag_invalid":
        expected = ", ".join(COMMAND_TYPES)
        return f"unknown command type {context.get('tag')!r} (expected one of {expected})"
    if error["type"] == "union_tag_not_found":
        return 'a command needs "type" (its name, e.g. "CLICK")'
    if error["type"] == "extra_forbidden":
        return "unknown key (not part of the recipe format)"
    return error["msg"].removeprefix("Value error, ")


def _label(command: Any) -> str:
    return f"WAIT_FOR {command.target}" if command.type == "WAIT_FOR" else command.type


def parse_recipe(data: Any, source: str = "recipe") -> RecipeFile:
    """A validated recipe file from decoded JSON, or a RecipeError listing every problem."""
    try:
        recipe = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        lines = [f"{json_path(e['loc'])}: {_reason(e)}" for e in exc.errors(include_url=False)]
        raise RecipeError(_listing(source, lines)) from None
    problems = _problems(recipe.bindings, recipe.recipe.commands, "recipe.commands", False)
    if problems:
        raise RecipeError(_listing(source, problems))
    return recipe


def _listing(source: str, lines: list[str]) -> str:
    count = f"{len(lines)} error" + ("s" if len(lines) > 1 else "")
    return f"{source} is not a valid recipe ({count}):\n" + "\n".join(f"  {x}" for x in lines)


def load_recipe(path: Path) -> RecipeFile:
    """Read and validate a recipe file; a RecipeError says what is wrong and where."""
    try:
        with Path(path).open("rb") as f:
            raw = f.read(MAX_RECIPE_BYTES + 1)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise RecipeError(f"no such recipe file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(f"cannot read recipe {path}: {exc}") from None
    if len(raw) > MAX_RECIPE_BYTES:
        raise RecipeError(f"recipe {path} is larger than {MAX_RECIPE_BYTES:,} bytes")
    return parse_recipe(recipe_json(text, f"recipe {path}"), str(path))


def recipe_json(text: str, what: str = "the recipe") -> Any:
    """A recipe's JSON text decoded; a RecipeError (one line) when it is not JSON or nests
    deeper than a recipe may."""
    try:
        return bounded_loads(text)
    except JsonTooDeep as exc:
        raise RecipeError(f"{what} is not a usable recipe: {exc}") from None
    except json.JSONDecodeError as exc:
        raise RecipeError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
