"""The web phases' one convention (web.phase): events while working, then exactly one outcome.

A phase that breaks it is a bug the reader names (PhaseError); a phase that keeps it hands its
result over in the outcome alone, as the dry run does with the items it skipped, checked here on
a real page served on loopback in real Chromium.
"""

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.requirements import in_chromium

from tui_agent.events import Event, Log, ToolResult
from tui_agent.web.generate.dry_run import DryRun, DryRunOutcome
from tui_agent.web.phase import Phase, PhaseError, PhaseRun, collect
from tui_agent.web.recipe import parse_recipe


@dataclass(frozen=True)
class Counted:
    """A toy phase's outcome."""

    count: int


async def toy(*items: Event | Counted) -> Phase[Counted]:
    for item in items:
        yield item


async def test_the_events_come_through_and_the_outcome_is_read_after_them() -> None:
    events, outcome = await collect(toy(Log(message="a"), Log(message="b"), Counted(2)), Counted)
    assert [event.message for event in events if isinstance(event, Log)] == ["a", "b"]
    assert outcome == Counted(2)


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ((Log(message="a"),), "a phase ended without its Counted"),
        ((Counted(1), Counted(2)), "a phase yielded two Counteds"),
        ((Counted(1), Log(message="late")), "a phase yielded an event after its Counted"),
    ],
    ids=["no-outcome", "two-outcomes", "event-after-outcome"],
)
async def test_a_phase_breaking_the_convention_is_a_phase_error(items, problem) -> None:
    with pytest.raises(PhaseError, match=problem):
        await collect(toy(*items), Counted)


async def test_the_outcome_is_not_there_before_the_phase_ended() -> None:
    run = PhaseRun(toy(Log(message="a"), Counted(1)), Counted)
    with pytest.raises(PhaseError, match="read before the phase ended"):
        run.outcome  # noqa: B018 (the property is what is tested)
    async for _ in run:
        pass
    assert run.outcome == Counted(1)


# --- the dry run's skipped items, from its outcome -------------------------------------------


ROWS = """<!doctype html><meta charset="utf-8"><title>rows</title><ul id="rows">{rows}</ul>
<script>
document.addEventListener("click", (event) => {{
  const more = event.target.closest("button.more");
  if (more) more.closest("li").querySelector(".detail").hidden = false;
}});
</script>"""

ROW = '<li><span class="name">Row {n}</span>{button}<p class="detail" hidden>detail {n}</p></li>'

RECIPE = {
    "bindings": {
        "LIST_ITEM": "#rows > li",
        "CLICK_BEHAVIOR": "inline",
        "ITEM_FIELDS": {"title": ".name"},
    },
    "recipe": {
        "id": "rows",
        "name": "rows",
        "commands": [
            {"type": "WAIT_FOR", "target": "list"},
            {
                "type": "FOR_EACH_ITEM_IN_LIST",
                "body": [
                    {"type": "CLICK", "selector": "button.more", "within": "item", "timeout": 2000},
                    {"type": "EXTRACT_DETAILS"},
                    {"type": "SAVE", "as": "item"},
                    {"type": "MARK_DONE"},
                ],
            },
        ],
    },
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No request log on stderr."""


@pytest.fixture
def rows_url(tmp_path: Path) -> Iterator[str]:
    """Six rows served on an ephemeral loopback port; rows 2 to 4 have nothing to click."""
    root = tmp_path / "site"
    root.mkdir()
    button = '<button class="more">more</button>'
    rows = "".join(ROW.format(n=n, button="" if 2 <= n <= 4 else button) for n in range(1, 7))
    (root / "rows.html").write_text(ROWS.format(rows=rows))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/rows.html"
    server.shutdown()
    server.server_close()


@in_chromium
async def test_the_dry_run_says_in_its_outcome_which_items_it_skipped(browser, rows_url):
    trial = DryRun(browser, rows_url, parse_recipe(RECIPE), items=2)
    events, outcome = await collect(trial.run(), DryRunOutcome)
    assert outcome.aborted is None and outcome.failure is None
    assert [item["title"] for item in outcome.items] == ["Row 1"], outcome.skipped
    # Three skipped are more than the two it wants: it gave up before rows 5 and 6.
    assert [reason.split('"')[0] for reason in outcome.skipped] == ["item 2 ", "item 3 ", "item 4 "]
    assert all(" skipped: " in reason for reason in outcome.skipped)
    assert outcome.gave_up
    assert outcome.present == 6
    # The events still show each skip, as a warning of its own, for the session to read.
    warned = [e.message for e in events if isinstance(e, Log) and e.level == "warning"]
    assert warned == [f"dry run: {reason}" for reason in outcome.skipped]
    assert all(e.call_id.startswith("dry1-") for e in events if isinstance(e, ToolResult))
