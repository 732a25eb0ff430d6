"""The form fields of one kind of request, derived from its fields' Options, and its errors
said under the field they name.

One widget per field on the form, by type: a Checkbox for a boolean, a Select for choices,
an integer or number Input, else a text Input (a path for fields read from a file, words
split like a shell's for lists). `values()` reads what was typed, leaving empty fields out
so the request's defaults apply; nothing is checked here: the request does that. Widget ids
come from the kind and the field name (`field_id`). Focusing a field never selects its text,
so a key pressed next cannot erase what was typed.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterator, Mapping
from itertools import groupby
from typing import Any, Literal

from pydantic_core import PydanticUndefined
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static

from tui_agent.agents.requests import RequestBase, RequestError
from tui_agent.agents.requests.base import Option, base_type, choices_of, field_options

URL_SCHEMES = ("http://", "https://", "file://")


def field_id(kind: str, name: str) -> str:
    """The id of the widget of field `name` on the form of `kind` ("code-max-steps")."""
    return f"{kind}-{name.replace('_', '-')}"


def with_scheme(url: str) -> str:
    """`url`, with `http://` added to a bare host (`127.0.0.1:8000/panel`, `localhost`)."""
    if not url or url.startswith(URL_SCHEMES) or "://" in url or " " in url:
        return url
    return f"http://{url}"


def short_label(option: Option) -> str:
    """The label without its explanation in brackets ("Budget USD (optional)" -> "Budget
    USD")."""
    return (option.label or "").split(" (")[0]


def form_line(error: RequestError, cls: type[RequestBase]) -> str:
    """`error` as the form says it: fields named by their labels; a settings-backed field
    left empty says where to type one ("No model: type one in the Model field (or set
    TUI_AGENT_MODEL)")."""
    options = dict(field_options(cls))

    def name_of(field: str) -> str:
        option = options.get(field)
        if option is not None and option.on_form:
            return short_label(option)
        return field.replace("_", " ") if field in cls.model_fields else f"{{{field}}}"

    line = error.worded(name_of)
    option = options.get(error.field or "")
    if error.unset and option is not None and option.on_form and error.field:
        variable = f" (or set TUI_AGENT_{error.field.upper()})" if option.setting else ""
        line = f"{line}: type one in the {short_label(option)} field{variable}"
    return line[:1].upper() + line[1:]


class RequestForm(Vertical):
    """The fields of a `cls` request the form shows, prefilled with `prefill` (else each
    field's default); the fields named in `hints` get a line below them for the screen to
    fill (`#<field id>-hint`)."""

    def __init__(
        self,
        cls: type[RequestBase],
        *,
        prefill: Mapping[str, Any] | None = None,
        hints: Collection[str] = (),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.cls = cls
        self.kind: str = cls.model_fields["kind"].default
        self.prefill = dict(prefill or {})
        self.hints = set(hints)
        self.fields = [(name, option) for name, option in field_options(cls) if option.on_form]

    def compose(self) -> ComposeResult:
        for row, group in groupby(self.fields, key=lambda field: field[1].row):
            fields = list(group)
            if row is None or len(fields) == 1:
                for name, option in fields:
                    yield from self._field(name, option)
                continue
            with Horizontal(classes="row"):
                for name, option in fields:
                    with Vertical(classes="cell"):
                        yield from self._field(name, option)

    def _field(self, name: str, option: Option) -> Iterator[Widget]:
        annotation = self.cls.model_fields[name].annotation
        value = self._initial(name)
        widget_id = field_id(self.kind, name)
        kind = base_type(annotation)
        if kind is bool:
            yield Checkbox(option.label or "", bool(value), id=widget_id)
            return
        yield Label(option.label or "")
        choices = choices_of(annotation)
        if choices:
            shown = [None, *choices] if None in option.choice_labels else list(choices)
            labels = [(option.choice_labels.get(choice, str(choice)), choice) for choice in shown]
            yield Select(labels, value=value, allow_blank=False, id=widget_id)
        else:
            text = "" if value is None else f"{value:g}" if kind is float else str(value)
            if option.reader is not None:  # a path to read, never the value read
                text = value if isinstance(value, str) else ""
            if kind is list:
                text = " ".join(shlex.quote(str(item)) for item in value or [])
            typed: Literal["integer", "number", "text"] = (
                "integer" if kind is int else "number" if kind is float else "text"
            )
            yield Input(
                text,
                placeholder=option.placeholder,
                type=typed,
                id=widget_id,
                select_on_focus=False,
            )
        if name in self.hints:
            yield Static(id=f"{widget_id}-hint", classes="hint")

    def _initial(self, name: str) -> Any:
        if self.prefill.get(name) is not None:
            return self.prefill[name]
        default = self.cls.model_fields[name].default
        return None if default is PydanticUndefined else default

    def widget(self, name: str) -> Widget:
        """The widget of field `name`."""
        return self.query_one(f"#{field_id(self.kind, name)}")

    @property
    def first_required(self) -> Widget:
        """The widget of the first field the request cannot do without (where typing starts)."""
        required = [name for name, _ in self.fields if self.cls.model_fields[name].is_required()]
        return self.widget(required[0] if required else self.fields[0][0])

    def values(self) -> dict[str, Any]:
        """What the form holds, by field name. Empty text fields are left out (the request's
        default applies), except prefilled ones: emptied, they mean none ("" for no model),
        and required ones: the request says what is missing, in its own words.
        A list that cannot be split is a RequestError naming its field."""
        values: dict[str, Any] = {}
        for name, option in self.fields:
            widget = self.widget(name)
            if isinstance(widget, Checkbox | Select):
                values[name] = widget.value
                continue
            assert isinstance(widget, Input)
            text = widget.value.strip()
            if option.url and with_scheme(text) != text:
                text = widget.value = with_scheme(text)  # shown as it is read
            if not text:
                if name in self.prefill or self.cls.model_fields[name].is_required():
                    values[name] = ""
                continue
            if base_type(self.cls.model_fields[name].annotation) is list:
                try:
                    values[name] = shlex.split(text)
                except ValueError as exc:
                    raise RequestError(name, f"{{{name}}}: {exc}") from None
            else:
                values[name] = text
        return values

    def show(self, error: RequestError, place: Widget) -> Static:
        """Say `error` under its field (which gets the focus, the cursor at the end of its
        text), or at the end of `place` when the form does not show that field; what was
        typed stays."""
        said = Static(Content(form_line(error, self.cls)), classes="field-error")
        names = [name for name, _ in self.fields]
        if error.field in names:
            field = self.widget(error.field)
            assert isinstance(field.parent, Widget)
            field.parent.mount(said, after=field)
            field.focus()
            if isinstance(field, Input):
                field.cursor_position = len(field.value)
        else:
            place.mount(said)
        return said
