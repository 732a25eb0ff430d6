"""Start a session from the home screen: which agent (code, task, toolcode, exec or scrape),
and what it needs."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, Static

SANDBOXES = ("auto", "docker", "bubblewrap", "local")
Planner = Literal["auto", "offline", "llm"]
PLANNERS: tuple[Planner, ...] = ("auto", "offline", "llm")
KINDS = [
    ("code: give the CodeAct agent a task", "code"),
    ("task: a task and a context become checked, cached code", "task"),
    ("toolcode: programs that chain MCP tools as Python calls", "toolcode"),
    ("exec: run a Python file in a sandbox", "exec"),
    ("scrape: plan a list page, write a verified recipe, extract its items", "scrape"),
]
URL_SCHEMES = ("http://", "https://", "file://")
AGENT_TYPES = ("scraper", "transformer", "analyzer", "api-client", "generic")
MODEL_KINDS = ("code", "task", "toolcode", "scrape")
"""Kinds whose form has the model field."""
StartProblem = tuple[str, str | None]
"""Why a filled form could not start: the message and the field it is about (None: the form)."""


SHELL_ADVICE = {
    "pass --model or set TUI_AGENT_MODEL": "type one in the Model field",
    "--planner llm": "the llm planner",
    "--max-items": "max items",
}
"""Command-line advice in errors, as the form says it."""


def form_problem(form: NewSessionForm, message: str) -> StartProblem:
    """An error that stopped `form`'s session from starting, in the form's words, with the
    field it is about (None: the form as a whole)."""
    for advice, instead in SHELL_ADVICE.items():
        message = message.replace(advice, instead)
    lowered = message.lower()
    url_field = "#scrape-url" if isinstance(form, ScrapeForm) else "#url"
    if isinstance(form, ToolcodeForm) and ("mcp" in lowered or "server" in lowered):
        field: str | None = "#toolcode-mcp"
    elif "model" in lowered or "api key" in lowered or "_api_key" in lowered:
        field = "#model" if not isinstance(form, ExecForm) else None
    elif "reach" in lowered or "url" in lowered or "chromium" in lowered:
        field = url_field if isinstance(form, ScrapeForm | ExecForm) else None
    elif "sandbox" in lowered or "docker" in lowered or "bubblewrap" in lowered:
        field = "#sandbox" if not isinstance(form, ScrapeForm) else None
    else:
        field = None
    return message[:1].upper() + message[1:], field


def with_scheme(url: str) -> str:
    """`url`, with `http://` added to a bare host (`127.0.0.1:8000/panel`, `localhost`)."""
    if not url or url.startswith(URL_SCHEMES) or "://" in url or " " in url:
        return url
    return f"http://{url}"


def model_hint(model: str) -> str:
    """Which key variable `model` needs and whether it is set (litellm asked offline)."""
    from tui_agent.llm.errors import LLMError
    from tui_agent.llm.provider import missing_key_variables, resolve_provider

    if not model:
        return "no model: code and task sessions and the llm planner need one"
    try:
        _, provider = resolve_provider(model, None)
        missing = missing_key_variables(model, None)
    except LLMError as error:
        return str(error)
    except Exception:  # litellm's own checks: say nothing rather than guess
        return f"provider {model.split('/')[0]}"
    if missing:
        return f"{provider}: needs {', '.join(missing)} (not set in this shell)"
    return f"{provider}: its key variable is set" if provider != "ollama" else "ollama: no key"


@dataclass(frozen=True)
class ExecForm:
    """What the user asked for: run `code` (read from `path`) with these options."""

    path: Path
    code: str
    args: list[str]
    url: str | None
    timeout: float
    sandbox: str
    agent_type: str | None = None
    context: dict[str, Any] | None = None


@dataclass(frozen=True)
class CodeForm:
    """A task for the CodeAct agent with its limits."""

    task: str
    max_steps: int
    budget: float | None
    approve: bool
    sandbox: str
    model: str | None = None


@dataclass(frozen=True)
class TaskForm:
    """A task for the task executor, the context it works on and its limits."""

    task: str
    context: dict[str, Any]
    context_path: Path | None
    timeout: float
    max_attempts: int
    budget: float | None
    use_cache: bool
    sandbox: str
    model: str | None = None


@dataclass(frozen=True)
class ScrapeForm:
    """A list page to plan and extract, as `tui-agent scrape` takes it."""

    url: str
    task: str
    planner: Planner
    max_items: int | None
    model: str | None = None


@dataclass(frozen=True)
class ToolcodeForm:
    """A task for the tool code agent, the MCP servers it uses (None: the configured ones)."""

    task: str
    mcp_config: Path | None
    max_steps: int
    sandbox: str
    model: str | None = None


NewSessionForm = ExecForm | CodeForm | TaskForm | ScrapeForm | ToolcodeForm


class NewSessionModal(ModalScreen[NewSessionForm | None]):
    """Start a code, task, toolcode, exec or scrape session. ctrl+s starts, Escape cancels."""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="new.start", tooltip="Start the session"),
        Binding("escape", "cancel", "Cancel", id="new.cancel", tooltip="Start nothing"),
    ]

    last_kind = "code"
    """The kind of the last session started from this form: it opens on it next time."""

    def __init__(
        self,
        default_sandbox: str = "auto",
        model: str | None = None,
        kind: str | None = None,
        starter: Callable[[NewSessionForm], StartProblem | None] | None = None,
    ) -> None:
        super().__init__(classes="new-session-modal")
        self._default_sandbox = default_sandbox
        self._model = model
        self._kind = kind or NewSessionModal.last_kind
        self._starter = starter

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "New session"
            with VerticalScroll(classes="fields"):
                yield from self._fields()
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start (ctrl+s)", id="start", variant="primary")
        yield Footer()

    def _fields(self) -> ComposeResult:
        yield Select(KINDS, value=self._kind, allow_blank=False, id="kind")
        with Vertical(id="model-field"):
            yield Label("Model (litellm name, e.g. gpt-4o-mini, ollama/qwen2.5-coder)")
            yield Input(self._model or "", placeholder="(none set) e.g. gpt-4o-mini", id="model")
            yield Static(id="model-hint", classes="hint")
        with Vertical(id="code-form", classes="form"):
            yield Label("Task for the agent")
            yield Input(placeholder="Calculate compound interest on 15k at 6%…", id="task")
            with Horizontal(classes="row"):
                with Vertical(classes="cell"):
                    yield Label("Max steps")
                    yield Input("10", id="max-steps", type="integer")
                with Vertical(classes="cell"):
                    yield Label("Budget USD (optional)")
                    yield Input(id="budget", type="number")
            yield Checkbox("Ask before each run (always on for local)", id="approve")
        with Vertical(id="task-form", classes="form"):
            yield from self._task_fields()
        with Vertical(id="toolcode-form", classes="form"):
            yield from self._toolcode_fields()
        with Vertical(id="exec-form", classes="form"):
            yield from self._exec_fields()
        with Vertical(id="scrape-form", classes="form"):
            yield from self._scrape_fields()
        with Vertical(id="sandbox-field"):
            yield Label("Sandbox")
            yield Select(
                [(name, name) for name in SANDBOXES],
                value=self._default_sandbox,
                allow_blank=False,
                id="sandbox",
            )

    def _task_fields(self) -> ComposeResult:
        yield Label("Task")
        yield Input(placeholder="Calculate the discount: 10% if total > 1000", id="task-prompt")
        yield Label("Context: a JSON file holding an object (optional)")
        yield Input(placeholder="path/to/context.json", id="task-context")
        with Horizontal(classes="row"):
            with Vertical(classes="cell"):
                yield Label("Timeout (seconds)")
                yield Input("30", id="task-timeout", type="number")
            with Vertical(classes="cell"):
                yield Label("Max attempts")
                yield Input("3", id="task-attempts", type="integer")
            with Vertical(classes="cell"):
                yield Label("Budget USD (optional)")
                yield Input(id="task-budget", type="number")
        yield Checkbox(
            "Use the code cache (no model call for a task done before)", True, id="task-cache"
        )

    def _toolcode_fields(self) -> ComposeResult:
        yield Label(f"Task (model: {self._model or 'none set'})")
        yield Input(placeholder="Price every kitchen product and save a table", id="toolcode-task")
        yield Label("MCP servers config (empty: TUI_AGENT_MCP_CONFIG)")
        yield Input(placeholder="path/to/servers.json", id="toolcode-mcp")
        yield Label("Max steps")
        yield Input("10", id="toolcode-steps", type="integer")

    def _exec_fields(self) -> ComposeResult:
        yield Label("Python file")
        yield Input(placeholder="path/to/program.py", id="path")
        yield Label("Arguments for main() (JSON literals are decoded)")
        yield Input(placeholder='5 "text" [1, 2]', id="args")
        yield Label("Context: a JSON file holding an object, passed in as context (optional)")
        yield Input(placeholder="path/to/context.json", id="exec-context")
        yield Label("URL to render in Chromium (optional: passes url and html in)")
        yield Input(placeholder="http://127.0.0.1:8000/panel", id="url")
        with Horizontal(classes="row"):
            with Vertical(classes="cell"):
                yield Label("What the code does (feedback follows it)")
                yield Select(
                    [("auto: scraper with a URL, else generic", "auto")]
                    + [(name, name) for name in AGENT_TYPES],
                    value="auto",
                    allow_blank=False,
                    id="agent-type",
                )
            with Vertical(classes="cell"):
                yield Label("Timeout (seconds)")
                yield Input("30", id="timeout", type="number")

    def _scrape_fields(self) -> ComposeResult:
        yield Label("List page URL")
        yield Input(placeholder="http://127.0.0.1:8000/panel", id="scrape-url")
        yield Label("What to extract")
        yield Input(placeholder="Extract 20 items", id="scrape-task")
        with Horizontal(classes="row"):
            with Vertical(classes="cell"):
                yield Label("Planner (auto: the model if set)")
                yield Select(
                    [(name, name) for name in PLANNERS],
                    value="auto",
                    allow_blank=False,
                    id="planner",
                )
            with Vertical(classes="cell"):
                yield Label("Max items (optional)")
                yield Input(id="max-items", type="integer")

    def on_mount(self) -> None:
        self._show_kind(self._kind)
        self._explain_model(self._value("#model"))

    @property
    def kind(self) -> str:
        return str(self.query_one("#kind", Select).value)

    @on(Select.Changed, "#kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        self._show_kind(str(event.value))

    def _show_kind(self, kind: str) -> None:
        self.query_one("#model-field").display = kind in MODEL_KINDS
        self.query_one("#code-form").display = kind == "code"
        self.query_one("#task-form").display = kind == "task"
        self.query_one("#toolcode-form").display = kind == "toolcode"
        self.query_one("#exec-form").display = kind == "exec"
        self.query_one("#scrape-form").display = kind == "scrape"
        self.query_one("#sandbox-field").display = kind != "scrape"
        self._clear_problem()
        first = {
            "code": "#task",
            "task": "#task-prompt",
            "toolcode": "#toolcode-task",
            "exec": "#path",
            "scrape": "#scrape-url",
        }[kind]
        self.query_one(first, Input).focus()

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()

    @property
    def problem(self) -> str:
        """What the form says is wrong now ("" when nothing)."""
        return "\n".join(str(p.content) for p in self.query(".field-error").results(Static))

    def _clear_problem(self) -> None:
        self.query(".field-error").remove()

    def _problem(self, text: str, focus: str | None) -> None:
        """Say what is wrong right under the field (`focus`, which gets the focus), or above
        the buttons; the form and everything typed in it stay."""
        self._clear_problem()
        error = Static(Content(text), classes="field-error")
        if focus is None:
            self.query_one(".fields").mount(error)
        else:
            field = self.query_one(focus)
            assert field.parent is not None
            field.parent.mount(error, after=field)
            field.focus()
        self.call_after_refresh(error.scroll_visible, animate=False)

    def read_form(self) -> NewSessionForm | None:
        """The chosen form, or None after showing what is wrong."""
        readers = {
            "code": self._read_code,
            "task": self._read_task,
            "toolcode": self._read_toolcode,
            "exec": self._read_exec,
            "scrape": self._read_scrape,
        }
        return readers[self.kind]()

    def _read_task(self) -> TaskForm | None:
        task = self._value("#task-prompt")
        if not task:
            self._problem("What should the code do? Type the task.", "#task-prompt")
            return None
        context: dict[str, Any] = {}
        path = (
            Path(self._value("#task-context")).expanduser()
            if self._value("#task-context")
            else None
        )
        if path is not None:
            try:
                context = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                why = getattr(exc, "strerror", None) or exc
                self._problem(f"Cannot read {path}: {why}", "#task-context")
                return None
            except json.JSONDecodeError as exc:
                where = f"line {exc.lineno} column {exc.colno}"
                self._problem(f"{path} is not valid JSON: {exc.msg} at {where}", "#task-context")
                return None
            if not isinstance(context, dict):
                self._problem(f"{path} must hold a JSON object", "#task-context")
                return None
        numbers = self._task_numbers()
        if numbers is None:
            return None
        timeout, attempts, budget = numbers
        use_cache = self.query_one("#task-cache", Checkbox).value
        return TaskForm(
            task,
            context,
            path,
            timeout,
            attempts,
            budget,
            use_cache,
            self._sandbox(),
            self._model_name(),
        )

    def _task_numbers(self) -> tuple[float, int, float | None] | None:
        """Timeout, max attempts and budget, or None after saying which is wrong."""
        try:
            timeout = float(self._value("#task-timeout"))
        except ValueError:
            timeout = 0.0
        if timeout <= 0:
            self._problem("The timeout is a positive number of seconds.", "#task-timeout")
            return None
        try:
            attempts = int(self._value("#task-attempts"))
        except ValueError:
            attempts = 0
        if attempts < 1:
            self._problem("Max attempts is a whole number, at least 1.", "#task-attempts")
            return None
        text = self._value("#task-budget")
        try:
            budget = float(text) if text else None
        except ValueError:
            budget = 0.0
        if budget is not None and budget <= 0:
            self._problem("The budget is a positive amount of USD, or empty.", "#task-budget")
            return None
        return timeout, attempts, budget

    def _read_toolcode(self) -> ToolcodeForm | None:
        task = self._value("#toolcode-task")
        if not task:
            self._problem("What should the programs do? Type the task.", "#toolcode-task")
            return None
        given = self._value("#toolcode-mcp")
        path = Path(given).expanduser() if given else None
        if path is not None and not path.is_file():
            self._problem(f"No MCP config file at {path}", "#toolcode-mcp")
            return None
        try:
            max_steps = int(self._value("#toolcode-steps"))
        except ValueError:
            max_steps = 0
        if max_steps < 1:
            self._problem("Max steps is a whole number, at least 1.", "#toolcode-steps")
            return None
        return ToolcodeForm(task, path, max_steps, self._sandbox(), self._model_name())

    def _read_scrape(self) -> ScrapeForm | None:
        url = self._url("#scrape-url")
        if not url.startswith(URL_SCHEMES):
            self._problem(
                "Which page? A URL (http://, https://, file://) or a host and path.",
                "#scrape-url",
            )
            return None
        task = self._value("#scrape-task")
        if not task:
            self._problem("What should be extracted? e.g. Extract 20 items", "#scrape-task")
            return None
        limit = self._value("#max-items")
        try:
            max_items = int(limit) if limit else None
        except ValueError:
            max_items = 0
        if max_items is not None and max_items < 1:
            self._problem("Max items is a whole number, at least 1, or empty.", "#max-items")
            return None
        chosen = self.query_one("#planner", Select).value
        planner = next(name for name in PLANNERS if name == chosen)
        return ScrapeForm(url, task, planner, max_items, self._model_name())

    def _read_code(self) -> CodeForm | None:
        task = self._value("#task")
        if not task:
            self._problem("What should the agent do? Type the task.", "#task")
            return None
        try:
            max_steps = int(self._value("#max-steps"))
        except ValueError:
            max_steps = 0
        if max_steps < 1:
            self._problem("Max steps is a whole number, at least 1.", "#max-steps")
            return None
        budget_text = self._value("#budget")
        try:
            budget = float(budget_text) if budget_text else None
        except ValueError:
            budget = 0.0
        if budget is not None and budget <= 0:
            self._problem("The budget is a positive amount of USD, or empty.", "#budget")
            return None
        approve = self.query_one("#approve", Checkbox).value
        return CodeForm(task, max_steps, budget, approve, self._sandbox(), self._model_name())

    def _sandbox(self) -> str:
        return str(self.query_one("#sandbox", Select).value)

    def _model_name(self) -> str | None:
        return self._value("#model") or None

    def _url(self, selector: str) -> str:
        """The URL typed in `selector`, with `http://` added to a bare host (shown so)."""
        field = self.query_one(selector, Input)
        url = with_scheme(field.value.strip())
        if url != field.value.strip():
            field.value = url
        return url

    def _json_object(self, selector: str) -> tuple[bool, dict[str, Any] | None]:
        """(ok, the object) read from the JSON file named in `selector` (None: left empty)."""
        text = self._value(selector)
        if not text:
            return True, None
        path = Path(text).expanduser()
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            self._problem(f"Cannot read {path}: {why}", selector)
            return False, None
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            self._problem(f"{path} is not valid JSON: {exc.msg} at {where}", selector)
            return False, None
        if not isinstance(value, dict):
            self._problem(f"{path} must hold a JSON object", selector)
            return False, None
        return True, value

    @on(Input.Changed, "#model")
    def _model_changed(self, event: Input.Changed) -> None:
        self._explain_model(event.value.strip())

    @work(thread=True, exclusive=True, group="model-hint")
    def _explain_model(self, model: str) -> None:
        """Which key variable the model needs (litellm is slow to import: in a thread)."""
        hint = model_hint(model)

        def show() -> None:
            if self._value("#model") == model:  # an older answer never hides a newer one
                self.query_one("#model-hint", Static).update(Content(hint))

        self.app.call_from_thread(show)

    def _read_exec(self) -> ExecForm | None:
        path = Path(self._value("#path")).expanduser()
        if not self._value("#path"):
            self._problem("Which file? Type its path.", "#path")
            return None
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._problem(f"Cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "#path")
            return None
        try:
            args = shlex.split(self._value("#args"))
        except ValueError as exc:
            self._problem(f"Arguments: {exc}", "#args")
            return None
        url = self._url("#url") or None
        if url is not None and not url.startswith(URL_SCHEMES):
            self._problem("The URL must start with http://, https:// or file://", "#url")
            return None
        try:
            timeout = float(self._value("#timeout"))
        except ValueError:
            timeout = 0.0
        if timeout <= 0:
            self._problem("The timeout is a positive number of seconds.", "#timeout")
            return None
        ok, context = self._json_object("#exec-context")
        if not ok:
            return None
        chosen = str(self.query_one("#agent-type", Select).value)
        agent_type = None if chosen == "auto" else chosen
        return ExecForm(path, code, args, url, timeout, self._sandbox(), agent_type, context)

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        """Start the session; whatever stops it is said at its field and the form stays."""
        self._clear_problem()
        form = self.read_form()
        if form is None:
            return
        problem = self._starter(form) if self._starter is not None else None
        if problem is not None:
            text, field = problem
            self._problem(text, field)
            return
        NewSessionModal.last_kind = self.kind
        self.dismiss(form)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
