"""Reviewing a candidate: the diff rows, the review screen's keys (later, reject, view), the
refine key's availability and a refinement that cannot start."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import (
    ITEMS,
    REFINED,
)
from session_factory import (
    agent_of,
    at_fixed_times,
    codeact_payloads,
    record,
    started,
    store_events,
)
from session_factory import wait_until as wait
from test_app import posted, stored_events
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import Input, Static

from tui_agent.config import Settings
from tui_agent.events import (
    Artifact,
    FeedbackSubmitted,
    FieldChange,
    SessionEnded,
    VersionDecided,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.messages import VersionDecisionRecorded
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.diff import DiffScreen, changes_from_summary, review_content
from tui_agent.tui.screens.feedback import FeedbackModal
from tui_agent.tui.screens.refine_flow import feedback_applied
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.diff_view import DiffRow, DiffView, diff_rows, unified_content

SESSION = REFINED
SIZE = (110, 36)
REASON = "keeps the old selector: 'a' and 's' typed"


def settings_without_model(tmp_path: Path) -> Settings:
    return Settings(db=tmp_path / "sessions.db", workspace=tmp_path / "workspace", model=None)


async def session_screen(pilot: Pilot[Any]) -> SessionScreen:
    await wait(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    await wait(pilot, lambda: screen.state.event_count > 0)
    return screen


def notices(messages: list[Message]) -> list[str]:
    return [m.notification.message for m in posted(messages, Notify)]


def test_rows_pair_changed_lines_and_fold_long_unchanged_runs() -> None:
    old = "\n".join(f"line {i}" for i in range(1, 21))
    new = old.replace("line 10", "line ten").replace("line 20", "line 20\nline 21")
    rows = diff_rows(old, new)
    assert rows[0] == DiffRow("fold", folded=6)
    assert [r.old for r in rows[1:4]] == ["line 7", "line 8", "line 9"]
    assert rows[4] == DiffRow("replace", 10, "line 10", 10, "line ten")
    assert rows[8] == DiffRow("fold", folded=4)
    assert rows[-1] == DiffRow("insert", None, None, 21, "line 21")
    assert diff_rows("a\nb", "a")[-1] == DiffRow("delete", 2, "b", None, None)


def test_the_unified_diff_marks_removed_and_added_lines() -> None:
    plain = unified_content("a\nb\nc", "a\nB\nc", "v1", "v2").plain.split("\n")
    assert plain == ["--- v1", "+++ v2", "@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"]
    assert unified_content("same", "same", "v1", "v2").plain == "(no difference)"


async def test_later_keeps_the_candidate_and_reject_records_the_decision_and_its_reason(
    refined_db: Path, tmp_path: Path
) -> None:
    messages: list[Message] = []
    app = TuiAgentApp(refined_db, open_session=SESSION, settings=settings_without_model(tmp_path))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await session_screen(pilot)
        await pilot.press("d")
        await wait(pilot, lambda: isinstance(app.screen, DiffScreen))
        view = app.screen.query_one(DiffView)
        assert not view.split  # under SPLIT_WIDTH columns: unified first
        await pilot.press("s")
        assert view.split
        await pilot.press("escape")
        await wait(pilot, lambda: app.screen is screen)
        assert "The candidate waits for you: d reviews it again." in notices(messages)
        await pilot.press("d")
        await wait(pilot, lambda: isinstance(app.screen, DiffScreen))
        review = app.screen
        reason = review.query_one("#reason", Input)
        # x asks why; Escape goes back to the diff, undecided, and forgets what was typed.
        await pilot.press("x")
        await wait(pilot, lambda: reason.has_focus)
        row, buttons = review.query_one("#diff-reason"), review.query_one("#diff-buttons")
        assert row.display and not buttons.display
        assert "diff.back" in [b.binding.id for b in review.active_bindings.values()]
        await pilot.press(*"oops", "escape")
        await wait(pilot, lambda: view_focused(review))
        assert app.screen is review and reason.value == ""
        assert buttons.display and not row.display
        # x again, a reason (its letters are typed, not taken as keys), Enter rejects.
        await pilot.press("x")
        await wait(pilot, lambda: reason.has_focus)
        await pilot.press(*REASON, "enter")
        await wait(pilot, lambda: bool(posted(messages, VersionDecisionRecorded)))
        await wait(pilot, lambda: screen.check_action("review", ()) is False)
        assert screen.state.current_versions["recipe"] == 1
        assert screen.state.items == ITEMS
        [recorded] = posted(messages, VersionDecisionRecorded)
        assert recorded.event.reason == REASON
        await wait(pilot, lambda: bool(screen.query(".decision-card")))
        card = screen.query_one(".decision-card", Static)
        assert str(card.content) == f"✗ rejected recipe v2 — {REASON}"
    events = await stored_events(refined_db, SESSION)
    assert isinstance(events[-1], VersionDecided)
    decided = events[-1]
    assert (decided.name, decided.version, decided.accepted) == ("recipe", 2, False)
    assert decided.reason == REASON


def test_verdicts_read_from_a_summary_recorded_before_changes_were_kept() -> None:
    changes = changes_from_summary("price 0% -> 100% (fixed); title 100% -> 60%; url 50% -> 50%")
    assert [(c.field, c.verdict, c.after) for c in changes] == [
        ("price", "fixed", 1.0),
        ("title", "worse", 0.6),
        ("url", "not fixed", 0.5),
    ]


def test_a_higher_coverage_is_never_read_as_not_fixed() -> None:
    """Summaries name no verdict for a field that was not resolved; candidates recorded
    before "improved" called a higher coverage "not fixed": both read as improved now."""
    changes = changes_from_summary("total 50% -> 100%; qty 100% -> 100% (improved)")
    assert [(c.field, c.verdict) for c in changes] == [("total", "improved"), ("qty", "improved")]
    recorded = Artifact(
        name="code",
        content="",
        format="python",
        version=2,
        candidate=True,
        changes=[
            FieldChange(field="total", before=0.5, after=1.0, verdict="not fixed"),
            FieldChange(field="name", before=1.0, after=1.0, verdict="not fixed"),
        ],
    )
    lines = str(review_content(recorded, "")).split("\n")
    assert lines[0].split() == ["↑", "total", "50%", "→", "100%", "improved"]
    assert lines[1].split() == ["·", "name", "100%", "→", "100%", "not", "fixed"]


@pytest.mark.parametrize(("width", "split"), [(100, False), (150, True)])
async def test_the_review_shows_each_fields_verdict_with_values_before_and_after(
    db_path: Path, tmp_path: Path, width: int, split: bool
) -> None:
    candidate = Artifact(
        name="code",
        content="return items",
        format="python",
        version=2,
        origin="refinement attempt 2",
        candidate=True,
        changes=[
            FieldChange(
                field="price",
                before=0.0,
                after=1.0,
                verdict="fixed",
                samples=[(None, 249.0), ("", 89.5)],
            ),
            FieldChange(
                field="seller",
                before=0.5,
                after=0.75,
                verdict="changed, not verified",
                samples=[("Ana", "ANA")],
            ),
            FieldChange(field="url", before=1.0, after=0.5, verdict="worse"),
        ],
    )
    original = Artifact(name="code", content="return []", format="python", origin="original")
    events = at_fixed_times(
        SESSION, started(), [original, candidate], SessionEnded(status="completed")
    )
    await store_events(db_path, events)
    app = TuiAgentApp(db_path, open_session=SESSION, settings=settings_without_model(tmp_path))
    async with app.run_test(size=(width, 36)) as pilot:
        await session_screen(pilot)
        await pilot.press("d")
        await wait(pilot, lambda: isinstance(app.screen, DiffScreen))
        review = app.screen
        assert review.query_one(DiffView).split is split
        lines = str(review.query_one("#diff-summary", Static).content).split("\n")
        assert lines[0].split() == ["✓", "price", "0%", "→", "100%", "fixed"]
        assert lines[1].split() == ["(empty)", "→", "249.0"]
        assert lines[3].split() == ["?", "seller", "50%", "→", "75%", "changed,", "not", "verified"]
        assert lines[4].split() == ['"Ana"', "→", '"ANA"']
        assert lines[5].split() == ["✗", "url", "100%", "→", "50%", "worse"]


async def test_r_says_what_it_runs_and_asks_when_the_feedback_was_applied(
    refined_db: Path, tmp_path: Path
) -> None:
    messages: list[Message] = []
    app = TuiAgentApp(refined_db, open_session=SESSION, settings=settings_without_model(tmp_path))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await session_screen(pilot)
        assert feedback_applied(screen.state) == "recipe v2 came of it and awaits review (d)"
        await pilot.press("ctrl+r")
        await wait(pilot, lambda: isinstance(app.screen, ConfirmModal))
        question = str(app.screen.query_one(".question", Static).content)
        assert question.startswith("Refine price (missing): each corrected selector is tried")
        assert "already applied: recipe v2 came of it" in question
        await pilot.press("n")  # nothing runs
        await wait(pilot, lambda: app.screen is screen)
        assert not screen.refining
    events = await stored_events(refined_db, SESSION)
    assert len(events) == screen.state.event_count


def view_focused(review: DiffScreen) -> bool:
    return review.query_one(DiffView).has_focus


async def test_the_reject_buttons_reject_with_no_reason(refined_db: Path, tmp_path: Path) -> None:
    app = TuiAgentApp(refined_db, open_session=SESSION, settings=settings_without_model(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await session_screen(pilot)
        await pilot.press("d")
        await wait(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.click("#reject")
        await wait(pilot, lambda: app.screen.query_one("#reason", Input).has_focus)
        await pilot.click("#confirm-reject")
        await wait(pilot, lambda: screen.check_action("review", ()) is False)
    events = await stored_events(refined_db, SESSION)
    assert isinstance(events[-1], VersionDecided)
    assert (events[-1].version, events[-1].accepted, events[-1].reason) == (2, False, "")


async def test_refine_is_offered_once_feedback_is_recorded(db_path: Path, tmp_path: Path) -> None:
    state = await record(db_path, started(), codeact_payloads())
    messages: list[Message] = []
    app = TuiAgentApp(
        db_path, open_session=state.session_id, settings=settings_without_model(tmp_path)
    )
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await session_screen(pilot)
        assert screen.check_action("refine", ()) is False
        assert screen.check_action("review", ()) is False
        await pilot.press("tab", "f")
        await wait(pilot, lambda: isinstance(app.screen, FeedbackModal))
        await pilot.press("enter", "down", "enter", "ctrl+r")  # missing, submit and refine
        await wait(pilot, lambda: any("needs a model" in n for n in notices(messages)))
        assert screen.check_action("refine", ()) is True
    events = await stored_events(db_path, state.session_id)
    assert len(events) == state.event_count + 1  # the feedback, and nothing of a refinement
    assert isinstance(events[-1], FeedbackSubmitted)


async def test_submit_and_refine_on_a_running_session_keeps_the_feedback(
    db_path: Path, tmp_path: Path
) -> None:
    hold = asyncio.Event()
    messages: list[Message] = []
    app = TuiAgentApp(db_path, settings=settings_without_model(tmp_path))
    app.start_session(started(), agent_of(codeact_payloads()[:14], hold))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await session_screen(pilot)
        await wait(pilot, lambda: screen.state.analysis is not None)
        await wait(pilot, lambda: screen.shown_seq == screen.state.last_seq)  # the table shows
        assert screen.check_action("refine", ()) is False
        await pilot.press("tab", "f")
        await wait(pilot, lambda: isinstance(app.screen, FeedbackModal))
        await pilot.press("enter", "down", "enter", "ctrl+r")
        waiting = "Refine (ctrl+r) once the agent has finished."
        await wait(pilot, lambda: waiting in notices(messages))
        assert screen.state.status == "running"
        await wait(pilot, lambda: bool(screen.state.feedback))
        hold.set()
        await wait(pilot, lambda: screen.state.status == "completed")
        assert screen.check_action("refine", ()) is True


class ReviewHarness(App[None]):
    """An app showing the review of `candidate` against `current`."""

    def __init__(self, current: Artifact, candidate: Artifact, note: str) -> None:
        super().__init__()
        self.review = DiffScreen(current, candidate, note)

    def on_mount(self) -> None:
        self.push_screen(self.review)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
def test_snapshot_review_of_an_improved_field(snap_compare: Any, size: tuple[int, int]) -> None:
    code = 'def main(orders):\n    return [{"name": o["name"], "total": {total}} for o in orders]\n'
    current = Artifact(name="code", content=code.replace("{total}", "None"), format="python")
    candidate = Artifact(
        name="code",
        content=code.replace("{total}", 'o["price"]'),
        format="python",
        version=2,
        origin="refinement attempt 1",
        candidate=True,
        changes=[
            FieldChange(
                field="total",
                issue="wrong",
                before=0.5,
                after=1.0,
                verdict="improved",
                samples=[(None, 19.99), (100.0, 100.0)],
            ),
            FieldChange(field="name", before=1.0, after=1.0, verdict="not fixed"),
        ],
    )
    note = "Fixed 0 fields; improved: total, 1 remaining: total (wrong)"
    assert snap_compare(ReviewHarness(current, candidate, note), terminal_size=size)
