"""The new-session form's batch fields: what the batch runs (a recipe, a task, a workflow or an
eval), the file or prompt it runs and the file of its inputs, the model and its server, the
engine and how many items run at once.

The labels follow what it runs (a recipe takes a URLs file, a task a prompt and a rows file, an
eval only its tasks file and a model); `values()` reads what was typed into `BatchInputs`,
which `batch/inputs.py` checks; its errors are said under the field they name. Widget ids are
`batch-<field>` (`field_id("batch", name)`), as the request forms' are.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static

from tui_agent.agents.requests import RequestError
from tui_agent.agents.requests.fields import API_BASE
from tui_agent.batch.inputs import BatchInputs
from tui_agent.batch.plan import BatchKind
from tui_agent.tui.request_form import field_id, with_scheme

KIND = "batch"
RUNS = (
    ("recipe: a saved recipe on each URL of a file", "recipe"),
    ("task: a task on each row of a file", "task"),
    ("workflow: a workflow on each row of a file", "workflow"),
    ("eval: the CodeAct agent on each task of a file, checked", "eval"),
)
SOURCE = {
    "recipe": ("Recipe file (JSON: bindings + commands)", "path/to/recipe.json"),
    "task": ("Task: what the code does with each row", "Add 10% tax to price"),
    "workflow": ("Workflow file (JSON)", "path/to/workflow.json"),
    "eval": ("Tasks file: JSON lines (HumanEval's, or task + check)", "path/to/tasks.jsonl"),
}
INPUTS = {
    "recipe": ("URLs file: one URL a line", "path/to/urls.txt"),
    "task": ("Rows file: JSON lines of objects, or a .csv with a header", "path/to/rows.jsonl"),
    "workflow": ("Rows file: JSON lines of objects, or a .csv with a header", "path/to/rows.jsonl"),
}
LABELS = {
    "model": "Model (litellm name, e.g. gpt-4o-mini, ollama/qwen2.5-coder)",
    "api_base": API_BASE.label or "",
    "engine": "Engine (local:N, dask-local:N…)",
    "max_in_flight": "Max in flight (optional)",
}
NAMES = {"source": "", "inputs": "", **dict.fromkeys(LABELS, "")}
"""The fields, by the names `BatchInputs` and its errors use."""


class BatchForm(Vertical):
    """The batch's fields, the model and its server prefilled with the configured ones."""

    kind = KIND

    def __init__(
        self,
        model: str | None,
        api_base: str | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ):
        super().__init__(id=id, classes=classes)
        self.model = model or ""
        self.api_base = api_base or ""

    def compose(self) -> ComposeResult:
        yield Label("Runs")
        yield Select(
            [(label, value) for label, value in RUNS],
            value="recipe",
            allow_blank=False,
            id=field_id(KIND, "of"),
        )
        yield from self._field("source")
        yield from self._field("inputs")
        yield from self._field("model", self.model)
        yield Static(id=f"{field_id(KIND, 'model')}-hint", classes="hint")
        yield from self._field("api_base", self.api_base, placeholder=API_BASE.placeholder)
        with Horizontal(classes="row"):
            with Vertical(classes="cell"):
                yield from self._field("engine", "local")
            with Vertical(classes="cell"):
                yield from self._field("max_in_flight", kind="integer")

    def _field(
        self,
        name: str,
        value: str = "",
        kind: Literal["integer", "text"] = "text",
        placeholder: str | None = None,
    ) -> Iterator[Widget]:
        yield Label(LABELS.get(name, ""), id=f"{field_id(KIND, name)}-label")
        field = field_id(KIND, name)
        yield Input(value, placeholder or "", type=kind, id=field, select_on_focus=False)

    def on_mount(self) -> None:
        self._show_runs("recipe")

    @property
    def runs(self) -> BatchKind:
        """What the batch runs, as chosen."""
        return cast(BatchKind, self.query_one(f"#{field_id(KIND, 'of')}", Select).value)

    @on(Select.Changed)
    def _runs_changed(self, event: Select.Changed) -> None:
        if event.select.id == field_id(KIND, "of"):
            self._show_runs(str(event.value))

    def _show_runs(self, runs: str) -> None:
        """Word the fields for what the batch runs; hide those it does not take."""
        for name, words in (("source", SOURCE), ("inputs", INPUTS)):
            label, placeholder = words.get(runs, ("", ""))
            self.query_one(f"#{field_id(KIND, name)}-label", Label).update(label)
            self.widget(name).placeholder = placeholder
        self._display("inputs", runs in INPUTS)
        self._display("model", runs != "recipe")
        self._display("api_base", runs != "recipe")
        self.query_one(f"#{field_id(KIND, 'model')}-hint").display = runs != "recipe"

    def _display(self, name: str, shown: bool) -> None:
        self.query_one(f"#{field_id(KIND, name)}-label").display = shown
        self.widget(name).display = shown

    def widget(self, name: str) -> Input:
        """The input of field `name`."""
        return self.query_one(f"#{field_id(KIND, name)}", Input)

    @property
    def first_required(self) -> Widget:
        return self.widget("source")

    def values(self) -> BatchInputs:
        """What the form holds (the fields a batch of this kind does not take left out); a
        RequestError when Max in flight is not a number."""
        runs = self.runs
        text = {name: self.widget(name).value.strip() for name in NAMES}
        if with_scheme(text["api_base"]) != text["api_base"]:  # as the request forms read it
            text["api_base"] = self.widget("api_base").value = with_scheme(text["api_base"])
        try:
            limit = int(text["max_in_flight"]) if text["max_in_flight"] else None
        except ValueError:
            raise RequestError("max_in_flight", "must be a whole number") from None
        return BatchInputs(
            of=runs,
            source=text["source"],
            inputs=text["inputs"] if runs in INPUTS else "",
            model=text["model"] if runs != "recipe" else "",
            api_base=text["api_base"] if runs != "recipe" else "",
            engine=text["engine"] or "local",
            max_in_flight=limit,
        )

    def show(self, error: RequestError, place: Widget) -> Static:
        """Say `error` under its field (which gets the focus), or at the end of `place`."""
        line = error.worded(lambda name: name.replace("_", " "))
        if error.unset and error.field == "model":
            line += ": type one in the Model field (or set TUI_AGENT_MODEL)"
        said = Static(Content(line[:1].upper() + line[1:]), classes="field-error")
        if error.field in NAMES:
            field = self.widget(error.field)
            assert isinstance(field.parent, Widget)
            field.parent.mount(said, after=field)
            field.focus()
        else:
            place.mount(said)
        return said
