"""The home screen's cursor after a session, the sessions list made only once a replay asked
for at once is left, and the command palette's commands."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from session_factory import (
    agent_of,
    codeact_payloads,
    record,
    scrape_payloads,
    started,
    wait_until,
)
from textual.message import Message
from textual.notifications import Notify

from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.commands import BindingCommands, NewSessionCommands
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.new_session import NewSessionModal
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable

SIZE = (100, 30)


async def test_back_from_a_new_session_the_cursor_is_on_it(db_path: Path) -> None:
    await record(db_path, started("An older session"), codeact_payloads()[:3])
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1)
        older = table.selected_id
        app.start_session(started("Scrape desks", "scrape"), agent_of(scrape_payloads()))
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        session = app.screen
        assert isinstance(session, SessionScreen)
        await wait_until(pilot, lambda: not session.running)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and table.row_count == 2)
        assert table.selected_id == session.session_id != older
        await pilot.press("enter")  # opens the one you came from, not the row below
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.screen.session_id == session.session_id


async def test_a_replay_asked_for_at_once_shows_alone_then_the_list_on_it(
    db_path: Path,
) -> None:
    replayed = await record(db_path, started("Replayed"), codeact_payloads()[:3])
    await record(db_path, started("Newer"), codeact_payloads()[:3])
    app = TuiAgentApp(db_path, replay_session=replayed.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        await pilot.pause()
        assert not any(isinstance(screen, HomeScreen) for screen in app.screen_stack)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        assert table.selected_id == replayed.session_id  # not the newest, on top
        assert len(app.screen_stack) == 2


async def test_a_replay_of_an_unknown_session_leaves_the_list_and_a_notice(
    db_path: Path,
) -> None:
    await record(db_path, started(), codeact_payloads()[:3])
    notices: list[Notify] = []
    app = TuiAgentApp(db_path, replay_session="ffffffff")
    hook = partial(keep_notices, notices)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1 and bool(notices))
        assert "ffffffff" in notices[0].notification.message
        assert len(app.screen_stack) == 2


def keep_notices(notices: list[Notify], message: Message) -> None:
    if isinstance(message, Notify):
        notices.append(message)


async def test_the_palette_finds_new_sessions_by_kind_and_lists_quit_once(db_path: Path) -> None:
    await record(db_path, started(), codeact_payloads()[:3])
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        home = app.screen
        new = [name for name, _, _ in NewSessionCommands(home).commands()]
        kinds = ("code", "task", "toolcode", "exec", "scrape", "batch")
        assert new == [f"New {kind} session" for kind in kinds]
        bound = [name for name, _, _ in BindingCommands(home).commands()]
        assert any(name.startswith("New: Start a session") for name in bound)
        assert any(name.startswith("Replay: ") for name in bound)
        system = [command.title for command in app.get_system_commands(home)]
        assert sum("quit" in name.casefold() for name in bound + system) == 1
        [run] = [run for name, run, _ in NewSessionCommands(home).commands() if "scrape" in name]
        run()
        await wait_until(
            pilot, lambda: isinstance(app.screen, NewSessionModal) and bool(app.screen.focused)
        )
        assert app.screen.kind == "scrape"
