"""Code refinement end to end: sessions in real SQLite files, the scripted model through
litellm, the code run in a real sandbox (bubblewrap; one test on docker)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from codeact_support import record
from support.requirements import require_backend, require_chromium
from support.scripted_model import Reply, ScriptedModel, action_reply, error, text
from support.sessions import record_exec, refine_stored, scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.refine import (
    CodeRefinement,
    RefinementError,
    RefinementOutcome,
    decide,
    start_refinement,
)
from tui_agent.agents.requests import CodeRequest
from tui_agent.analysis.shapes import FeedbackExample, FieldFeedback
from tui_agent.config import Settings
from tui_agent.events import (
    Artifact,
    CodeProposed,
    Error,
    Event,
    ExecutionFinished,
    ItemsExtracted,
    LLMCall,
    Log,
    OutputAnalyzed,
    RefinementProgress,
    SessionStarted,
    ThoughtDelta,
    VersionDecided,
)
from tui_agent.llm import LLM, RetryPolicy
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.session import SessionState, fold
from tui_agent.store import Store
from tui_agent.web.recipe import load_recipe

RECIPES = Path(__file__).resolve().parents[2] / "recipes"

ORDERS = [
    {"id": 1, "name": "Oak desk", "qty": 2, "price": 100.0},
    {"id": 2, "name": "Pine shelf", "qty": 1, "price": 89.5},
    {"id": 3, "name": "Lamp", "qty": 3, "price": 20.0},
    {"id": 4, "name": "Rug", "qty": 1, "price": 120.0},
]
TOTALS = [200.0, 89.5, 60.0, 120.0]
TRANSFORM = """\
def main(orders):
    return [{{"id": o["id"], "name": {name}, "total": {total}}} for o in orders]
"""
ORIGINAL = TRANSFORM.format(name='o["name"].lower()', total="None")
STILL_MISSING = TRANSFORM.format(name='o["name"].lower()', total='o.get("sum")')
TOTAL_FIXED = TRANSFORM.format(name='o["name"].lower()', total='o["qty"] * o["price"]')
NAME_LOST = TRANSFORM.format(name="None", total='o["qty"] * o["price"]')
NAME_TITLED = TRANSFORM.format(name='o["name"].title()', total='o["qty"] * o["price"]')
TOTAL_MISSING = FieldFeedback(field="total", issue="missing", correct_expression="qty * price")
NAME_FORMAT = FieldFeedback(
    field="name",
    issue="format",
    notes="keep the name as written",
    examples=[FeedbackExample(input=1, expected_output="Oak desk")],
)

PAGE = """\
<html><body><h1>Shop</h1><ul>
<li class="product"><h2>Oak desk</h2>
  <span class="price"><s class="was">300.00</s> <b class="now">249.00</b></span></li>
<li class="product"><h2>Pine shelf</h2>
  <span class="price"><s class="was">99.00</s> <b class="now">89.50</b></span></li>
<li class="product"><h2>Lamp</h2>
  <span class="price"><s class="was">25.00</s> <b class="now">19.99</b></span></li>
</ul></body></html>
"""
SCRAPER = """\
import re

def main():
    items = []
    for block in re.findall(r'<li class="product">(.*?)</li>', html, re.S):
        title = re.search(r"<h2>(.*?)</h2>", block).group(1)
        price = re.search({pattern}, block).group(1)
        items.append({{"title": title, "price": price}})
    return items
"""
WRONG_PRICE = SCRAPER.format(pattern='r"<span class=\\"price\\">.*?([0-9.]+)"')
RIGHT_PRICE = SCRAPER.format(pattern='r"<b class=\\"now\\">([0-9.]+)</b>"')


def reply(code: str, thought: str = "I change how the field is computed.") -> Reply:
    """A scripted model reply holding a JSON code action, streamed in small pieces."""
    return action_reply(thought, "execute_code", code=code, chunk_size=16)


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


def llm_of(settings: Settings) -> LLM:
    assert settings.model is not None
    return LLM(settings.model, api_base=settings.api_base)


async def exec_session(settings: Settings, request: ExecuteRequest, **options: Any) -> str:
    """Record an exec session (the code really runs) and return its id."""
    state = await record_exec(settings, request, "orders", **options)
    assert state.status == "completed"
    return state.session_id


async def transformer_session(settings: Settings, code: str = ORIGINAL) -> str:
    request = ExecuteRequest(code=code, args=[ORDERS])
    return await exec_session(settings, request, agent_type="transformer")


@dataclass
class Refined:
    outcome: RefinementOutcome
    new: list[Event]
    """The events the refinement added (after FeedbackSubmitted), as stored."""
    state: SessionState

    def of(self, kind: type) -> list:
        return [e for e in self.new if isinstance(e, kind)]

    @property
    def messages(self) -> list[str]:
        return [e.message for e in self.of(RefinementProgress)]


async def refine(
    settings: Settings,
    session_id: str,
    feedback: list[FieldFeedback],
    max_attempts: int = 5,
    llm: LLM | None = None,
) -> Refined:
    """Append FeedbackSubmitted and the refinement to the stored session, as the CLI does."""
    async with await Store.open(settings.db) as store:
        recorder, refinement, events = await refine_stored(
            store,
            session_id,
            feedback,
            settings=settings,
            llm=llm or llm_of(settings),
            max_attempts=max_attempts,
        )
        stored = await store.events(session_id)
        assert fold(stored).summary() == recorder.state.summary()
    assert refinement.outcome is not None
    new = stored[-len(events) :]
    return Refined(refinement.outcome, new, fold(stored))


async def decided(settings: Settings, session_id: str, version: int, accepted: bool) -> Refined:
    async with await Store.open(settings.db) as store:
        recorder = await SessionRecorder.resume(store, session_id)
        last = recorder.state.last_seq
        async for event in decide(recorder.state, "code", version, accepted, settings=settings):
            await recorder.emit(event)
        stored = await store.events(session_id)
    new = [e for e in stored if e.seq > last]
    return Refined(RefinementOutcome(name="code", candidate=None), new, fold(stored))


def user_prompt(server: ScriptedModel, call: int) -> str:
    return server.requests[call].messages[-1]["content"]


# -- the scenarios ----------------------------------------------------------------------------


async def test_a_transformers_missing_field_is_fixed_on_attempt_2(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(STILL_MISSING), reply(TOTAL_FIXED, "total is qty times price."))

    refined = await refine(settings, session_id, [TOTAL_MISSING])

    outcome = refined.outcome
    assert (outcome.fixed, outcome.remaining, outcome.attempts) == (["total"], [], 2)
    assert outcome.error is None
    assert [item["total"] for item in outcome.items] == TOTALS
    assert outcome.analysis is not None and outcome.analysis.field("total").coverage == 100
    original, candidate = refined.of(Artifact)
    assert (original.version, original.origin, original.candidate) == (1, "original", False)
    assert original.content == ORIGINAL and original.format == "python"
    assert outcome.candidate is not None and outcome.candidate.content == candidate.content
    assert (candidate.version, candidate.candidate, candidate.content) == (2, True, TOTAL_FIXED)
    assert candidate.origin == "refinement attempt 2"
    assert candidate.summary == "total 0% -> 100% (fixed)"
    [change] = candidate.changes  # what the review shows: verdict, coverage, values
    assert (change.field, change.verdict, change.before, change.after) == ("total", "fixed", 0, 1)
    assert [after for _, after in change.samples] == TOTALS[: len(change.samples)]
    assert refined.messages == [
        "Attempt 1/5: fixing total (missing)",
        "Testing improved code…",
        "Fixed 0 fields, 1 remaining (1 model call)",
        "Attempt 2/5: fixing total (missing)",
        "Testing improved code…",
        "Fixed 1 field, 0 remaining (1 model call)",
        "Fixed 1 field",
    ]
    # each attempt streamed on a new step after the session's own step 1
    assert [(e.step, e.code) for e in refined.of(CodeProposed)] == [
        (2, STILL_MISSING),
        (3, TOTAL_FIXED),
    ]
    assert {e.step for e in refined.of(ThoughtDelta)} == {2, 3}
    runs = refined.of(ExecutionFinished)
    assert [(e.step, e.success) for e in runs] == [(2, True), (3, True)]
    assert [(c.step, c.purpose) for c in refined.of(LLMCall)] == [(2, "refine"), (3, "refine")]
    logs = [e.message for e in refined.of(Log)]
    assert (
        "attempt 1: total (missing): 0% -> 0%, not fixed: coverage 0% is below the 80% target"
        in logs
    )
    assert "attempt 2: total (missing): 0% -> 100%, fixed" in logs
    # the session's table is untouched until the user decides
    assert refined.state.items[0]["total"] is None
    assert refined.state.current_versions == {"code": 1}
    # the prompt: the transformer's, with the sample input, then the first attempt's failure
    first, second = user_prompt(server, 0), user_prompt(server, 1)
    assert first.startswith("You are refining transformer code based on user feedback.")
    assert "SAMPLE INPUT:" in first and '"name": "Oak desk"' in first
    assert "Correct expression: qty * price" in first and "EARLIER ATTEMPTS" not in first
    assert "- attempt 1: fixed nothing new: total (missing): 0% -> 0%" in second


async def test_a_scrapers_wrong_field_is_fixed_over_the_injected_html(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await exec_session(settings, ExecuteRequest(code=WRONG_PRICE, html=PAGE))
    async with await Store.open(settings.db) as store:
        before = await store.state(session_id)
    assert before.agent_type == "scraper" and before.test_context["html"] == PAGE
    assert [item["price"] for item in before.items] == ["300.00", "99.00", "25.00"]
    feedback = FieldFeedback(
        field="price",
        issue="wrong",
        correct_selector=".price .now",
        examples=[FeedbackExample(input="Oak desk", expected_output="249.00")],
    )
    server.push(reply(RIGHT_PRICE, "The current price is in b.now, not the struck one."))

    refined = await refine(settings, session_id, [feedback])

    assert (refined.outcome.fixed, refined.outcome.remaining) == (["price"], [])
    assert [item["price"] for item in refined.outcome.items] == ["249.00", "89.50", "19.99"]
    candidate = refined.outcome.candidate
    assert candidate is not None and candidate.summary == "price 100% -> 100% (fixed)"
    assert refined.messages[-1] == "Fixed 1 field"
    prompt = user_prompt(server, 0)
    assert prompt.startswith("You are refining scraper code based on user feedback.")
    assert "Correct selector: .price .now" in prompt
    assert '<b class="now">249.00</b>' in prompt  # the page the code reads
    assert 'price = re.search(r"<span class=' in prompt  # the current logic for the field
    assert '{"title": "Oak desk", "price": "300.00"}' in prompt  # the wrong values


async def test_an_attempt_that_lowers_another_field_is_refused(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    fewer = TOTAL_FIXED.replace("in orders]", "in orders[:2]]")
    server.push(reply(NAME_LOST), reply(fewer), reply(TOTAL_FIXED))

    refined = await refine(settings, session_id, [TOTAL_MISSING])

    warnings = [e.message for e in refined.of(Log) if e.level == "warning"]
    assert warnings == [
        "attempt 1 refused: it lowers the coverage of name 100% -> 0%",
        "attempt 2 refused: it returns fewer items (4 -> 2)",
    ]
    # attempts 1 and 2 fixed total, but were refused: nothing counted as fixed after them
    assert (
        refined.messages[2] == refined.messages[5] == "Fixed 0 fields, 1 remaining (1 model call)"
    )
    assert refined.outcome.fixed == ["total"]
    candidate = refined.outcome.candidate
    assert candidate is not None and candidate.origin == "refinement attempt 3"
    assert candidate.content == TOTAL_FIXED
    assert [item["name"] for item in refined.outcome.items] == [
        "oak desk",
        "pine shelf",
        "lamp",
        "rug",
    ]
    second, third = user_prompt(server, 1), user_prompt(server, 2)
    assert "- attempt 1: refused: it lowers the coverage of name 100% -> 0%" in second
    assert "- attempt 2: refused: it returns fewer items (4 -> 2)" in third


async def test_max_attempts_end_in_partial_success_naming_the_remaining_fields(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(TOTAL_FIXED), reply(NAME_TITLED))

    refined = await refine(settings, session_id, [TOTAL_MISSING, NAME_FORMAT], max_attempts=2)

    outcome = refined.outcome
    assert (outcome.fixed, outcome.remaining, outcome.attempts) == (["total"], ["name"], 2)
    assert refined.messages == [
        "Attempt 1/2: fixing total (missing), name (format)",
        "Testing improved code…",
        "Fixed 1 field, 1 remaining (1 model call)",
        "Attempt 2/2: fixing name (format)",
        "Testing improved code…",
        "Fixed 1 field, 1 remaining (1 model call)",
        "Fixed 1 field, 1 remaining: name (format)",
    ]
    last = refined.of(RefinementProgress)[-1]
    assert (last.fixed, last.remaining, last.attempt) == (["total"], ["name"], 2)
    candidate = outcome.candidate
    assert candidate is not None and candidate.content == TOTAL_FIXED
    assert candidate.summary == "total 0% -> 100% (fixed); name 100% -> 100%"
    # the second prompt is narrowed to what remains, on top of the first attempt's code
    second = user_prompt(server, 1)
    assert '- Field "name": format' in second and '- Field "total"' not in second
    assert 'o["qty"] * o["price"]' in second.split("OUTPUT ANALYSIS:")[0]
    assert "Items where it is as extracted now" in second
    logs = [e.message for e in refined.of(Log)]
    assert any("expected 'Oak desk' for 1" in line for line in logs)


async def test_an_attempt_that_changes_nothing_stops_the_loop_with_that_reason(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(STILL_MISSING), reply(STILL_MISSING + "\n"))  # the same code again

    refined = await refine(settings, session_id, [TOTAL_MISSING])

    assert refined.outcome.attempts == 2 and refined.outcome.candidate is None
    assert len(server.requests) == 2  # no third attempt
    assert [e.code for e in refined.of(CodeProposed)] == [STILL_MISSING, STILL_MISSING + "\n"]
    assert len(refined.of(ExecutionFinished)) == 1  # the repeat is not run again
    assert refined.messages[-1] == (
        "Stopped (attempt 2 changed nothing: the model returned code already tried). "
        "Fixed 0 fields, 1 remaining: total (missing)"
    )


async def test_a_wrong_field_with_nothing_to_check_against_is_changed_not_verified(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(TRANSFORM.format(name='o["name"].title()', total="None")))
    unchecked = FieldFeedback(field="name", issue="wrong", notes="the names look off")

    refined = await refine(settings, session_id, [unchecked])

    outcome = refined.outcome
    assert (outcome.fixed, outcome.unverified, outcome.remaining) == ([], ["name"], [])
    assert outcome.candidate is not None
    assert outcome.candidate.summary == (
        "name 100% -> 100% (changed, not verified: 'oak desk' -> 'Oak Desk', "
        "'pine shelf' -> 'Pine Shelf', 'lamp' -> 'Lamp')"
    )
    assert refined.messages[-1] == "Fixed 0 fields; changed, not verified: name"
    assert refined.of(RefinementProgress)[-1].unverified == ["name"]
    logs = [e.message for e in refined.of(Log)]
    assert (
        "attempt 1: name (wrong): 100% -> 100%, changed, not verified "
        "('oak desk' -> 'Oak Desk'; 'pine shelf' -> 'Pine Shelf'; 'lamp' -> 'Lamp')" in logs
    )


ANALYZER = """\
def main(orders):
    return [{{"id": o["id"], "band": {band}}} for o in orders]
"""
BANDS = '"low" if o["price"] < 50 else "mid" if o["price"] <= 100 else "high"'
BAND_FEEDBACK = FieldFeedback(
    field="band",
    issue="format",
    correct_pattern="low|mid|high",
    value_description="price bands: low under 50, mid up to 100, high above",
)


async def analyzer_session(settings: Settings) -> str:
    code = ANALYZER.format(band='"big" if o["price"] > 100 else "small"')
    return await exec_session(
        settings, ExecuteRequest(code=code, args=[ORDERS]), agent_type="analyzer"
    )


async def test_an_analyzers_pattern_is_checked_and_its_description_goes_to_the_model(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await analyzer_session(settings)
    server.push(reply(ANALYZER.format(band='str(o["price"])')), reply(ANALYZER.format(band=BANDS)))

    refined = await refine(settings, session_id, [BAND_FEEDBACK])

    outcome = refined.outcome
    assert (outcome.fixed, outcome.unverified, outcome.attempts) == (["band"], [], 2)
    assert [item["band"] for item in outcome.items] == ["mid", "mid", "low", "high"]
    logs = [e.message for e in refined.of(Log)]
    assert any(
        line.startswith("attempt 1: band (format): 100% -> 100%, not fixed: 4 of 4 values")
        for line in logs
    ), logs
    assert "attempt 2: band (format): 100% -> 100%, fixed" in logs
    first = user_prompt(server, 0)
    assert first.startswith("You are refining analyzer code based on user feedback.")
    assert "Correct pattern (every value must fully match): low|mid|high" in first
    assert (
        "What the values should look like: price bands: low under 50, mid up to 100, high above"
        in first
    )


async def test_an_analyzers_description_alone_is_changed_not_verified(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await analyzer_session(settings)
    server.push(reply(ANALYZER.format(band=BANDS)))
    described = BAND_FEEDBACK.model_copy(update={"correct_pattern": None})

    refined = await refine(settings, session_id, [described])

    assert (refined.outcome.fixed, refined.outcome.unverified) == ([], ["band"])
    assert refined.messages[-1] == "Fixed 0 fields; changed, not verified: band"
    assert "What the values should look like: price bands" in user_prompt(server, 0)


async def test_no_improving_attempt_leaves_no_candidate(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply("def main(orders):\n    raise KeyError('sum')\n"))

    refined = await refine(settings, session_id, [TOTAL_MISSING], max_attempts=1)

    assert refined.outcome.candidate is None and refined.outcome.items == []
    assert [a.version for a in refined.of(Artifact)] == [1]
    assert refined.messages[-1] == (
        "No attempt improved the code. Fixed 0 fields, 1 remaining: total (missing)"
    )
    assert "attempt 1: the code failed (KeyError: 'sum')" in [e.message for e in refined.of(Log)]


async def test_an_attempt_that_only_improves_a_field_is_kept_as_the_candidate(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(TOTAL_FIXED))
    literal = FieldFeedback(field="total", issue="missing", correct_value="qty * price")

    refined = await refine(settings, session_id, [literal], max_attempts=1)

    outcome = refined.outcome
    assert outcome.candidate is not None and outcome.candidate.content == TOTAL_FIXED
    assert (outcome.fixed, outcome.remaining) == ([], ["total"])
    [change] = outcome.candidate.changes
    assert (change.verdict, change.before, change.after) == ("improved", 0.0, 1.0)
    assert outcome.candidate.summary == "total 0% -> 100% (improved)"
    assert refined.messages[-1] == ("Fixed 0 fields; improved: total, 1 remaining: total (missing)")
    logs = [e.message for e in refined.of(Log)]
    assert (
        "attempt 1: total (missing): 0% -> 100%, improved: "
        "the correct value 'qty * price' does not appear" in logs
    )
    assert "attempt 1 is the best so far (0 of 1 feedback items resolved, improved: total)" in logs


async def test_a_provider_failure_stops_the_refinement_and_is_recorded(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(STILL_MISSING), error(401, "invalid api key"))
    assert settings.model is not None
    llm = LLM(settings.model, api_base=settings.api_base, retry=RetryPolicy(attempts=1))

    refined = await refine(settings, session_id, [TOTAL_MISSING], llm=llm)

    assert refined.outcome.attempts == 2 and refined.outcome.candidate is None
    assert refined.outcome.error is not None
    [failure] = refined.of(Error)
    assert failure.message == refined.outcome.error
    assert refined.messages[-1].startswith(f"Stopped ({refined.outcome.error}). Fixed 0 fields")
    assert len(server.requests) == 2  # no third attempt after the failure


async def test_accepting_a_version_reruns_it_and_replaces_the_items(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(TOTAL_FIXED))
    await refine(settings, session_id, [TOTAL_MISSING])

    accepted = await decided(settings, session_id, 2, True)

    assert [type(e) for e in accepted.new[:2]] == [VersionDecided, CodeProposed]
    assert accepted.of(VersionDecided)[0].accepted
    [items] = accepted.of(ItemsExtracted)
    assert items.replace and items.step == 3
    assert [row["total"] for row in items.items] == TOTALS
    [analysis] = accepted.of(OutputAnalyzed)
    assert analysis.analysis.field("total").coverage == 100
    state = accepted.state
    assert state.current_versions == {"code": 2}
    assert [row["total"] for row in state.items] == TOTALS and len(state.items) == 4
    assert state.analysis == analysis.analysis


async def test_rejecting_a_version_changes_nothing_else(
    server: ScriptedModel, settings: Settings
) -> None:
    session_id = await transformer_session(settings)
    server.push(reply(TOTAL_FIXED))
    refined = await refine(settings, session_id, [TOTAL_MISSING])

    rejected = await decided(settings, session_id, 2, False)

    assert [type(e) for e in rejected.new] == [VersionDecided]
    assert rejected.state.items == refined.state.items
    assert rejected.state.current_versions == {"code": 1}
    with pytest.raises(RefinementError, match="no version 7"):
        await anext(decide(rejected.state, "code", 7, True, settings=settings))
    with pytest.raises(RefinementError, match="not a candidate"):
        await anext(decide(rejected.state, "code", 1, True, settings=settings))


async def test_a_codeact_session_is_refined_with_its_earlier_steps_rerun(
    server: ScriptedModel, settings: Settings
) -> None:
    load = f"orders = {ORDERS!r}"
    table = "[{'name': o['name'], 'total': None} for o in orders]"
    server.push(
        reply(load, "Load the orders."),
        reply(table, "Build the table."),
        text(json.dumps({"thought": "Done.", "action": "provide_answer", "final_answer": "ok"})),
    )
    launch = prepare(CodeRequest(task="tabulate the orders", agent_type="transformer"), settings)
    recorded = await record(settings.db, launch.started, launch.events)
    assert recorded.state.agent_type == "transformer"
    assert recorded.state.test_context == {"args": []}
    fixed = "[{'name': o['name'], 'total': o['qty'] * o['price']} for o in orders]"
    server.push(reply(fixed))

    refined = await refine(settings, recorded.state.session_id, [TOTAL_MISSING])

    assert refined.of(Artifact)[0].content == table  # the step that returned the items
    assert refined.outcome.fixed == ["total"]  # `orders` came from re-running step 1
    assert [row["total"] for row in refined.outcome.items] == TOTALS
    assert [e.step for e in refined.of(CodeProposed)] == [4]
    assert "THE CODE'S TASK: tabulate the orders" in user_prompt(server, 3)


@pytest.mark.docker
async def test_on_docker_too(tmp_path: Path, server: ScriptedModel) -> None:
    require_backend("docker")
    settings = scripted_settings(server, tmp_path, "docker")
    session_id = await transformer_session(settings)
    server.push(reply(TOTAL_FIXED))

    refined = await refine(settings, session_id, [TOTAL_MISSING])

    assert refined.outcome.fixed == ["total"]
    assert {e.backend for e in refined.new if e.type == "execution_started"} == {"docker"}


class _PageHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def page_url() -> Iterator[str]:
    """PAGE served on an ephemeral loopback port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/shop"
    server.shutdown()
    server.server_close()


@pytest.mark.chromium
async def test_a_page_from_a_url_is_rendered_again_for_the_attempts(
    server: ScriptedModel, settings: Settings, page_url: str
) -> None:
    require_chromium()
    session_id = await exec_session(settings, ExecuteRequest(code=WRONG_PRICE, url=page_url))
    feedback = FieldFeedback(field="price", issue="wrong", correct_selector=".price .now")
    server.push(reply(RIGHT_PRICE))

    refined = await refine(settings, session_id, [feedback])

    phases = [(e.type, e.phase) for e in refined.new if e.type.startswith("phase_")]
    assert phases == [("phase_started", "load page"), ("phase_finished", "load page")]
    assert [item["price"] for item in refined.outcome.items] == ["249.00", "89.50", "19.99"]
    assert '<b class="now">249.00</b>' in user_prompt(server, 0)


# -- what cannot be refined -------------------------------------------------------------------


async def stored_state(settings: Settings, session_id: str) -> SessionState:
    async with await Store.open(settings.db) as store:
        return await store.state(session_id)


async def test_a_session_run_with_network_is_refined_with_network(
    server: ScriptedModel, settings: Settings
) -> None:
    """The attempts reach what the original run reached (a listener on this machine's
    loopback, which a sandbox without network cannot see)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = (
            "import socket\n"
            "def main():\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
            "    return [{'id': 1, 'total': None}, {'id': 2, 'total': None}]\n"
        )
        state = await record_exec(
            settings, ExecuteRequest(code=code), "net", agent_type="transformer", network=True
        )
        assert state.status == "completed" and state.params["network"] is True
        server.push(reply(code.replace("'total': None", "'total': 5")))
        missing = FieldFeedback(field="total", issue="missing")
        refined = await refine(settings, state.session_id, [missing], max_attempts=1)
    assert refined.outcome.fixed == ["total"]


async def test_refusals_are_one_clear_line(server: ScriptedModel, settings: Settings) -> None:
    session_id = await transformer_session(settings)
    state = await stored_state(settings, session_id)
    llm = llm_of(settings)
    with pytest.raises(RefinementError, match="needs a model"):
        start_refinement(state, [TOTAL_MISSING], settings=settings, llm=None)
    with pytest.raises(RefinementError, match="no feedback"):
        start_refinement(state, [], settings=settings, llm=llm)
    local = settings.model_copy(update={"sandbox": "local"})
    with pytest.raises(RefinementError, match="local sandbox is not isolated"):
        start_refinement(state, [TOTAL_MISSING], settings=local, llm=llm)
    assert isinstance(
        start_refinement(state, [TOTAL_MISSING], settings=settings, llm=llm), CodeRefinement
    )


async def test_a_session_whose_code_returned_no_records_cannot_be_refined(
    settings: Settings,
) -> None:
    session_id = await exec_session(settings, ExecuteRequest(code="1 + 1"))
    state = await stored_state(settings, session_id)
    with pytest.raises(RefinementError, match="no code that produced items"):
        start_refinement(state, [TOTAL_MISSING], settings=settings, llm=llm_of(settings))


def test_a_recipe_session_is_refined_as_a_recipe(settings: Settings) -> None:
    require_chromium()
    recipe = load_recipe(RECIPES / "demo-pagination.json").to_json()
    started = SessionStarted(
        kind="scrape",
        title="recipe",
        agent_type="scraper",
        test_context={"url": "http://127.0.0.1:9/", "recipe": recipe},
    )
    state = fold([started])
    feedback = [FieldFeedback(field="title", issue="missing", correct_selector="h2")]
    refinement = start_refinement(state, feedback, settings=settings, llm=None)
    assert type(refinement).__name__ == "RecipeRefinement"
