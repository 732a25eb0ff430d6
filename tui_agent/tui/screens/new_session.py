"""Start a session from the home screen: which kind (code, task, toolcode, exec or scrape),
and the fields of its request; or a batch of them (batch/form.py).

The flow goes one way: the form reads its fields into the kind's request (the request checks
them), prepares the session through the launch path (in a thread: it may wait for a page or
a Docker engine) and is dismissed with the prepared `Launch`, which the app records. A batch
is prepared the same way (its files read, every item checked: `batch/inputs.py`) and the
form is dismissed with the `BatchStart`, which the app drives. Anything wrong is said under
the field it names, with the form and what was typed kept open.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Select, Static

from tui_agent.agents.launch import Launch
from tui_agent.agents.requests import (
    CodeRequest,
    ExecRequest,
    RequestBase,
    RequestError,
    ScrapeRequest,
    TaskRequest,
    ToolcodeRequest,
    request_from_inputs,
)
from tui_agent.batch.inputs import BatchInputs, BatchStart, prepare_batch
from tui_agent.config import Settings
from tui_agent.tui.batch.form import BatchForm
from tui_agent.tui.request_form import RequestForm, field_id
from tui_agent.tui.retry import prepare_in_tui

FORM_KINDS: tuple[type[RequestBase], ...] = (
    CodeRequest,
    TaskRequest,
    ToolcodeRequest,
    ExecRequest,
    ScrapeRequest,
)
"""The kinds of session the form starts, in the order it lists them."""
KINDS = [(f"{cls.model_fields['kind'].default}: {cls.summary}", cls) for cls in FORM_KINDS]
BATCH = ("batch: a recipe, task, workflow or eval over each line of a file", "batch")
"""The form's last choice: a batch of sessions."""


def kind_of(cls: type[RequestBase]) -> str:
    return str(cls.model_fields["kind"].default)


def model_hint(model: str, api_base: str = "") -> str:
    """Which key variable `model` needs and whether it is set, or, at an API base, that the
    server takes it without one (litellm asked offline)."""
    from tui_agent.llm.errors import LLMError
    from tui_agent.llm.provider import missing_key_variables, resolve_provider

    if not model:
        return "no model: code and task sessions and the llm planner need one"
    try:
        _, provider = resolve_provider(model, api_base or None)
        missing = missing_key_variables(model, api_base or None)
    except LLMError as error:
        return str(error)
    except Exception:  # litellm's own checks: say nothing rather than guess
        return f"provider {model.split('/')[0]}"
    if api_base:
        return f"{provider} at the API base below ({'no key set' if missing else 'key set'})"
    if missing:
        return f"{provider}: needs {', '.join(missing)} (not set in this shell)"
    return f"{provider}: its key variable is set" if provider != "ollama" else "ollama: no key"


class NewSessionModal(ModalScreen[Launch | BatchStart | None]):
    """Start a code, task, toolcode, exec or scrape session, or a batch. ctrl+s starts,
    Escape cancels."""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="new.start", tooltip="Start the session"),
        Binding("escape", "cancel", "Cancel", id="new.cancel", tooltip="Start nothing"),
    ]

    last_kind = "code"
    """The kind of the last session started from this form: it opens on it next time."""

    def __init__(self, settings: Settings, kind: str | None = None) -> None:
        super().__init__(classes="new-session-modal")
        self.settings = settings
        self._kind = kind or NewSessionModal.last_kind
        self._preparing = False

    def compose(self) -> ComposeResult:
        prefill = {"model": self.settings.model, "sandbox": self.settings.sandbox}
        if self.settings.api_base:  # else left out: an untouched field means the settings'
            prefill["api_base"] = self.settings.api_base
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "New session"
            with VerticalScroll(classes="fields"):
                kinds = [(label, kind_of(cls)) for label, cls in KINDS]
                yield Select([*kinds, BATCH], value=self._kind, allow_blank=False, id="kind")
                for cls in FORM_KINDS:
                    yield RequestForm(
                        cls,
                        prefill=prefill,
                        hints={"model"},
                        id=f"{kind_of(cls)}-form",
                        classes="form",
                    )
                yield BatchForm(
                    self.settings.model, self.settings.api_base, id="batch-form", classes="form"
                )
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start (ctrl+s)", id="start", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        self._show_kind(self._kind)
        for form in self.forms:
            if form.query(f"#{field_id(form.kind, 'model')}"):
                self._explain_model(form.kind, self.settings.model or "", self._api_base(form.kind))

    @property
    def kind(self) -> str:
        return str(self.query_one("#kind", Select).value)

    @property
    def forms(self) -> list[RequestForm | BatchForm]:
        """The form of each kind (one is shown)."""
        return [*self.query(RequestForm), self.query_one(BatchForm)]

    @property
    def form(self) -> RequestForm | BatchForm:
        """The form of the kind chosen."""
        return next(form for form in self.forms if form.kind == self.kind)

    @on(Select.Changed, "#kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        self._show_kind(str(event.value))

    def _show_kind(self, kind: str) -> None:
        for form in self.forms:
            form.display = form.kind == kind
        self._clear_problem()
        next(form for form in self.forms if form.kind == kind).first_required.focus()

    @property
    def problem(self) -> str:
        """What the form says is wrong now ("" when nothing)."""
        return "\n".join(str(p.content) for p in self.query(".field-error").results(Static))

    def _clear_problem(self) -> None:
        self.query(".field-error").remove()

    def _problem(self, error: RequestError) -> None:
        """Say `error` under its field, or above the buttons; the form stays as typed."""
        self._clear_problem()
        said = self.form.show(error, self.query_one(".fields"))
        self.call_after_refresh(said.scroll_visible, animate=False)

    def _api_base(self, kind: str) -> str:
        """What the API base field of `kind`'s form holds ("" when it has none)."""
        found = self.query(f"#{field_id(kind, 'api_base')}").results(Input)
        return next((field.value.strip() for field in found), "")

    @on(Input.Changed)
    def _model_changed(self, event: Input.Changed) -> None:
        if event.input.id in (field_id(self.kind, "model"), field_id(self.kind, "api_base")):
            model = self.query_one(f"#{field_id(self.kind, 'model')}", Input).value.strip()
            self._explain_model(self.kind, model, self._api_base(self.kind))

    @work(thread=True, group="model-hint")
    def _explain_model(self, kind: str, model: str, api_base: str) -> None:
        """Which key variable the model needs (litellm is slow to import: in a thread)."""
        hint = model_hint(model, api_base)

        def show() -> None:
            if not self.is_attached:
                return
            field = self.query_one(f"#{field_id(kind, 'model')}", Input)
            # an older answer never hides a newer one
            if field.value.strip() == model and self._api_base(kind) == api_base:
                self.query_one(f"#{field_id(kind, 'model')}-hint", Static).update(Content(hint))

        self.app.call_from_thread(show)

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        """Start the session; whatever stops it is said at its field and the form stays."""
        if self._preparing:
            return
        self._clear_problem()
        form = self.form
        try:
            if isinstance(form, BatchForm):
                batch = form.values()
            else:
                request = request_from_inputs(form.cls, form.values())
        except RequestError as error:
            self._problem(error)
            return
        self._preparing = True
        if isinstance(form, BatchForm):
            self._prepare_batch(batch)
        else:
            self._prepare(request)

    @work(thread=True, group="prepare")
    def _prepare(self, request: RequestBase) -> None:
        """Prepare the session (the launch path's checks may wait for a page or an engine)."""
        try:
            launch = prepare_in_tui(self.app, request, self.settings)
        except RequestError as error:
            self.app.call_from_thread(self._refused, error)
            return
        self.app.call_from_thread(self._prepared, launch)

    @work(thread=True, group="prepare")
    def _prepare_batch(self, given: BatchInputs) -> None:
        """Read the batch's files and check its items (a recipe's checker loads Playwright)."""
        try:
            start = prepare_batch(given, self.settings)
        except RequestError as error:
            self.app.call_from_thread(self._refused, error)
            return
        self.app.call_from_thread(self._prepared, start)

    def _refused(self, error: RequestError) -> None:
        self._preparing = False
        if self.is_attached:
            self._problem(error)

    def _prepared(self, launch: Launch | BatchStart) -> None:
        self._preparing = False
        if self.is_attached and self.is_current:
            NewSessionModal.last_kind = self.kind
            self.dismiss(launch)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Start nothing (once a session being prepared is ready or refused)."""
        if not self._preparing:
            self.dismiss(None)
