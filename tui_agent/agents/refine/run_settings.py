"""The settings a session's code or recipe runs with again, checked as if the user typed them.

Refining a session and accepting a refined version run its code (or its recipe) again, on its
page, with its network setting. A session recorded here runs with what was typed for it, the URL
checked again. A session imported from a file is someone else's input: its URL must pass the
checks a typed `--url` passes (http and https; file:// only when the user allows it), its code
never reaches the network unless the user turns it on now, and what will run (the code or the
recipe, and these settings) is shown as a `RunPlan` for the user to approve before anything runs
(the CLI asks on the terminal, the TUI in a dialog; with no one to ask it is refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.agents.refine.errors import RefinementError
from tui_agent.web.browser import BrowserError, check_navigable

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.session import SessionState

"""The pages an imported session may load without the user allowing more."""
_CONTROLS = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if chr(code) not in "\n\t"
}
"""Control characters (ESC among them) and how a plan shows them: never sent to a terminal."""


@dataclass(frozen=True)
class Allowances:
    """What the user allowed for this run beyond what an imported session gets."""

    network: bool = False
    """Let the code reach the network (`--network`)."""
    file_urls: bool = False
    """Let a file:// URL be loaded (`--allow-file-urls`)."""


@dataclass(frozen=True)
class RunSettings:
    """How the code or recipe runs again: the page it is given and whether it has a network."""

    url: str | None
    network: bool
    imported_from: str | None = None
    """The file the session was imported from (None: recorded here)."""

    @property
    def imported(self) -> bool:
        return self.imported_from is not None


def run_settings(
    state: SessionState, *, imported_from: str | None = None, allowed: Allowances | None = None
) -> RunSettings:
    """The session's settings checked as typed; a RefinementError (one line) names the one
    refused. Imported: the network is what `allowed` says, whatever the file says."""
    allowed = allowed or Allowances()
    imported = imported_from is not None
    url = state.test_context.get("url")
    if url is not None:
        url = _checked_url(url, allow_file=allowed.file_urls, imported=imported)
    recorded = bool(state.params.get("network"))
    network = allowed.network if imported else recorded or allowed.network
    return RunSettings(url=url, network=network, imported_from=imported_from)


def _checked_url(url: Any, *, allow_file: bool, imported: bool) -> str:
    whose = "the imported session's" if imported else "the session's"
    if not isinstance(url, str):
        raise RefinementError(f"{whose} URL is not text: {url!r:.80}")
    try:
        return check_navigable(url, allow_file=allow_file)
    except BrowserError as exc:
        raise RefinementError(f"{whose} URL is refused: {exc}") from None


@dataclass(frozen=True)
class RunPlan:
    """What is about to run for an imported session, to show before asking."""

    session_id: str
    imported_from: str
    action: str
    """What the user asked for, in words ("accept code v2 (re-run)", "refine price")."""
    content: str
    """The code that runs (earlier steps' first) or the recipe's JSON."""
    language: str
    """How `content` is highlighted ("python", "json")."""
    settings: list[tuple[str, str]]
    """(setting, value) pairs: sandbox, network, page, ..."""

    @property
    def title(self) -> str:
        return f"Run the code of imported session {_visible(self.session_id)}?"

    def shown_content(self) -> str:
        """`content` as it may be shown: control characters written as `\\xNN`."""
        return _visible(self.content)

    def settings_text(self) -> str:
        """The action, then the settings one `name  value` per line (controls escaped)."""
        width = max(len(name) for name, _ in self.settings)
        rows = [f"{name:<{width}}  {value}" for name, value in self.settings]
        return _visible("\n".join([self.action, *rows]))


def _visible(text: str) -> str:
    return text.translate(_CONTROLS)


def code_plan(
    state: SessionState,
    run: RunSettings,
    settings: Settings,
    *,
    action: str,
    code: str,
    prelude: list[str],
    timeout: float,
) -> RunPlan:
    """The plan of running `code` (after `prelude`, the earlier steps' code) in a sandbox."""
    assert run.imported_from is not None
    shown = "\n\n".join([*(f"# earlier step\n{c}" for c in prelude), code])
    isolation = " (NOT isolated: runs as this user)" if settings.sandbox == "local" else ""
    rows = [
        ("file", run.imported_from),
        ("sandbox", f"{settings.sandbox}{isolation}"),
        ("network", _network(run)),
        ("workspace", str(settings.workspace)),
        ("page", f"{run.url} (loaded in Chromium)" if run.url else "none"),
        ("timeout", f"{timeout:g} s a run"),
    ]
    return RunPlan(state.session_id, run.imported_from, action, shown, "python", rows)


def recipe_plan(
    state: SessionState, run: RunSettings, *, action: str, recipe: str, max_items: Any
) -> RunPlan:
    """The plan of running a recipe in Chromium on the session's page."""
    assert run.imported_from is not None
    rows = [
        ("file", run.imported_from),
        ("runs in", "Chromium"),
        ("page", run.url or "none"),
        ("max items", str(max_items) if max_items else "no limit"),
    ]
    return RunPlan(state.session_id, run.imported_from, action, recipe, "json", rows)


def _network(run: RunSettings) -> str:
    if run.network:
        return "ON (--network)"
    return "off (an imported session's code has no network unless you pass --network)"
