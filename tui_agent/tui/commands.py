"""Command palette providers: the active screen's key bindings, and per-session commands."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui_agent.terminal_text import visible
from tui_agent.tui.messages import SessionRequested

if TYPE_CHECKING:
    from tui_agent.tui.screens.home import HomeScreen

Command = tuple[str, Callable[[], object], str]


class CommandList(Provider):
    """A provider over a list of (name, callback, help) that subclasses produce."""

    @abstractmethod
    def commands(self) -> Iterator[Command]:
        """The commands on offer now."""

    async def discover(self) -> Hits:
        for name, run, help_text in self.commands():
            yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self.commands():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)


class BindingCommands(CommandList):
    """Every enabled binding of the screen the palette was opened on, named by what it does
    (`New: Start a session… (n)`). The app's own bindings are left to Textual's system
    commands, which already list them (Quit once, not twice)."""

    def commands(self) -> Iterator[Command]:
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            key = binding.id or binding.action
            if active.node is self.app or not active.enabled or not binding.description:
                continue
            if key in seen:
                continue
            seen.add(key)
            run = partial(self.app.run_action, binding.action, active.node)
            what = binding.description
            if binding.tooltip and binding.tooltip != what:
                what = f"{what}: {binding.tooltip}"
            yield f"{what} ({self.app.get_key_display(binding)})", run, binding.description


class NewSessionCommands(CommandList):
    """`New code session`, `New task session`, … : the new-session form, on that kind."""

    def commands(self) -> Iterator[Command]:
        screen: HomeScreen = self.screen  # type: ignore[assignment]
        for kind, help_text in NEW_KINDS:
            yield f"New {kind} session", partial(screen.action_new, kind), help_text


NEW_KINDS = (
    ("code", "A task for the CodeAct agent"),
    ("task", "A task and a context for the task executor"),
    ("toolcode", "Programs that chain MCP tools as Python calls"),
    ("exec", "Run a Python file in a sandbox"),
    ("scrape", "Plan a list page, write a verified recipe, extract its items"),
    ("batch", "Many sessions at once: a recipe, task, workflow or eval over a file"),
)


class SessionCommands(CommandList):
    """Open, replay or delete any listed session by its title or id."""

    def commands(self) -> Iterator[Command]:
        screen: HomeScreen = self.screen  # type: ignore[assignment]
        for summary in screen.shown_sessions:
            sid, label = summary.session_id, visible(f"{summary.title} ({summary.session_id})")
            yield (
                f"Open {label}",
                partial(screen.post_message, SessionRequested(sid, "stored")),
                f"{summary.kind} · {summary.status}",
            )
            yield (
                f"Replay {label}",
                partial(screen.post_message, SessionRequested(sid, "replay")),
                "Play the recorded events back",
            )
            yield (
                f"Delete {label}",
                partial(screen.confirm_delete, sid),
                "Asks before deleting",
            )
