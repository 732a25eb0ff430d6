"""The task executor end to end: the scripted model through litellm, a real sandbox (docker,
else bubblewrap; docker under CI), a real SQLite store and cache. The spec's three examples,
the cache, the budget, the circuit breaker, the validator and what JSON cannot hold."""

from __future__ import annotations

import base64
import socket
from pathlib import Path

import pytest
from support.scripted_model import Reply, ScriptedModel, ToolCallReply, text, tool_calls
from task_support import code_reply, pdf_with_text, record_task, verdict

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import TaskRequest, WorkflowRequest
from tui_agent.agents.task.breaker import CircuitBreaker, model_server
from tui_agent.agents.task.workflow import parse_workflow
from tui_agent.config import Settings
from tui_agent.events import (
    AttemptStarted,
    CheckVerdict,
    CodeProposed,
    ExecutionStarted,
    LLMCall,
    Log,
    SessionStarted,
    TaskResult,
    ToolCall,
    ToolResult,
)
from tui_agent.store.task_cache import TaskCache

SPEC_KEYS = {
    "model", "prompt_task", "generated_code", "code_length", "tokens_input_estimated",
    "tokens_output_estimated", "cost_usd_estimated", "generation_time_ms", "execution_time_ms",
    "total_time_ms", "attempts", "cache_hit", "tool_calling_enabled", "tool_calls",
    "total_tool_calls", "two_stage_enabled", "ai_self_determined", "stages_used",
    "analysis_metadata",
}  # fmt: skip
DISCOUNT_TASK = "Calculate discount (10% if total > 1000)"
DISCOUNT_CODE = """\
total = context['total']
discount_rate = 0.10 if total > 1000 else 0.0
context['discount'] = total * discount_rate
context['final_total'] = total - context['discount']
"""


async def run_task(
    settings: Settings,
    task: str,
    context: dict,
    *,
    session_id: str = "task00000001",
    cache: bool = True,
    breaker: CircuitBreaker | None = None,
    **limits,
):
    launch = prepare(
        TaskRequest(task=task, context=context, use_cache=cache, **limits),
        settings,
        session_id=session_id,
        cache=TaskCache(settings.db),
        breaker=breaker or CircuitBreaker(),
    )
    return await record_task(settings.db, launch)


async def test_a_simple_task_updates_the_context_and_records_its_metadata(
    settings: Settings, server: ScriptedModel
):
    server.push(
        code_reply(DISCOUNT_CODE, prose="I'll compute it directly."),
        verdict(True, "a 10% discount of 1500 is 150"),
    )
    context = {"total": 1500, "smtp_password": "hunter2"}
    ran = await run_task(settings, DISCOUNT_TASK, context)

    assert ran.state.status == "completed"
    assert {k: v for k, v in ran.context.items() if k != "_ai_metadata"} == {
        "total": 1500,
        "smtp_password": "hunter2",  # the caller gets its own secret back
        "discount": 150.0,
        "final_total": 1350.0,
    }
    metadata = ran.metadata
    assert set(metadata) >= SPEC_KEYS
    assert metadata["stages_used"] == 1 and metadata["analysis_metadata"] is None
    assert metadata["attempts"] == 1 and metadata["cache_hit"] is False
    assert metadata["model"] == settings.model and metadata["model_source"] == "default"
    assert metadata["generated_code"].startswith("# STAGE: TASK\ntotal = context['total']")
    assert metadata["code_length"] == len(metadata["generated_code"])
    assert metadata["usage_source"] == "provider"
    calls = ran.of(LLMCall)
    assert [c.purpose for c in calls] == ["generate", "validate"]
    assert metadata["tokens_input_estimated"] == sum(c.prompt_tokens for c in calls)
    assert metadata["cost_usd_estimated"] == pytest.approx(sum(c.cost for c in calls))
    assert metadata["output_validation"] == {
        "valid": True,
        "reason": "a 10% discount of 1500 is 150",
    }
    assert metadata["status"] == "success" and "final_error" not in metadata

    # the prompt follows the spec's sections; the secret is described, never sent
    system = server.requests[0].messages[0]["content"]
    for section in ("# STAGE: ANALYSIS", "# STAGE: TASK", "CONTEXT PROVIDED:", "USER TASK:"):
        assert section in system
    assert "search_documentation(library, query)" in system
    assert "hunter2" not in str(server.requests[0].body)
    assert "hunter2" not in str(server.requests[1].body)

    # what was recorded: one attempt, its checks, the result with the secret masked
    [attempt] = ran.of(AttemptStarted)
    assert (attempt.attempt, attempt.max_attempts, attempt.cached) == (1, 3, False)
    checks = [(c.check, c.passed) for c in ran.of(CheckVerdict)]
    assert checks == [("context_access", True), ("serialization", True), ("output", True)]
    [result] = ran.of(TaskResult)
    assert result.status == "success"
    assert result.context["smtp_password"] == "***" and result.context["final_total"] == 1350.0
    assert "hunter2" not in "".join(e.model_dump_json() for e in ran.stored)
    [row] = ran.chain
    assert row["status"] == "success" and row["node_type"] == "task"
    assert row["code_executed"] == metadata["generated_code"]
    assert row["output_result"]["discount"] == 150.0
    assert row["input_context"] == {"total": 1500, "smtp_password": "***"}
    assert row["ai_metadata"]["attempts"] == 1


async def test_the_model_analyses_a_pdf_first_then_solves_the_task(
    settings: Settings, server: ScriptedModel
):
    pdf = pdf_with_text(["ACME Corp invoice 42", "Total: $1,234.56"])
    context = {"pdf_data_b64": base64.b64encode(pdf).decode(), "client_name": "Acme Corp"}
    server.push(
        code_reply(
            """
import base64
import fitz
pdf_bytes = base64.b64decode(context['pdf_data_b64'])
doc = fitz.open(stream=pdf_bytes, filetype="pdf")
result = {"type": "pdf", "pages": len(doc), "has_text_layer": bool(doc[0].get_text().strip())}
""",
            stage="ANALYSIS",
        ),
        code_reply(
            """
import base64, fitz, re
pdf_bytes = base64.b64decode(context['pdf_data_b64'])
doc = fitz.open(stream=pdf_bytes, filetype="pdf")
text = "".join(page.get_text() for page in doc)
match = re.search(r'Total[:\\s]+\\$?([\\d,]+\\.?\\d*)', text, re.IGNORECASE)
context['total_amount'] = match.group(1) if match else None
context['extraction_status'] = 'success' if match else 'not_found'
"""
        ),
        verdict(True, "the total was found in the PDF"),
    )
    ran = await run_task(settings, "Extract total amount from invoice PDF", context)

    assert ran.state.status == "completed", ran.state.errors
    assert ran.context["total_amount"] == "1,234.56"
    assert ran.context["extraction_status"] == "success"
    assert "_data_analysis" not in ran.context
    metadata = ran.metadata
    assert metadata["stages_used"] == 2
    analysis = metadata["analysis_metadata"]
    assert analysis["analysis_result"] == {"type": "pdf", "pages": 1, "has_text_layer": True}
    assert analysis["analysis_code"].startswith("# STAGE: ANALYSIS")
    assert metadata["generated_code"].startswith("# STAGE: TASK")
    assert metadata["attempts"] == 1
    # the second request is the stage-two prompt, carrying the analysis results
    second = server.requests[1].messages
    assert "You previously analyzed the data" in second[0]["content"]
    assert '"pages": 1' in second[1]["content"]
    # the first prompt describes the PDF without pasting it
    first = server.requests[0].messages[0]["content"]
    assert "base64 of a PDF document" in first
    assert context["pdf_data_b64"][:200] not in first
    stages = [(e.step, e.action) for e in ran.of(CodeProposed)]
    assert stages == [(1, "analysis"), (2, "task")]
    assert [e.attempt for e in ran.of(AttemptStarted)] == [1, 1]


async def test_three_attempts_each_prompt_carrying_the_error_history(
    settings: Settings, server: ScriptedModel
):
    context = {"email_user": "test@example.com", "email_password": "secret"}
    server.push(
        code_reply("send_email(email_user, password)"),
        code_reply(
            "email_user = context.get('user')\n"
            "context['email_to'] = email_user\n"
            "context['email_sent'] = email_user is not None"
        ),
        verdict(False, "email_user is None, cannot send email"),
        code_reply(
            "email_user = context['email_user']\n"
            "password = context['email_password']\n"
            "context['email_to'] = email_user\n"
            "context['email_sent'] = bool(email_user and password)"
        ),
        verdict(True, "the email address was read and marked sent"),
    )
    ran = await run_task(settings, "Send email notification", context)

    assert ran.state.status == "completed"
    assert ran.context["email_sent"] is True and ran.context["email_to"] == "test@example.com"
    assert ran.metadata["attempts"] == 3
    # attempt 1 was refused before running: no execution of its step
    first_step = ran.of(AttemptStarted)[0].step
    assert first_step not in [e.step for e in ran.of(ExecutionStarted)]
    refusal = ran.of(CheckVerdict)[0]
    assert (refusal.check, refusal.passed) == ("context_access", False)
    assert "name 'email_user' (line 2) is used but never defined" in refusal.message
    assert "email_user = context['email_user']" in refusal.message
    # the history in the spec's format, growing with each attempt
    second = server.requests[1].messages[-1]["content"]
    assert "Attempt 1: FAILED\nError: context access: name 'send_email'" in second
    assert "Code preview: # STAGE: TASK\nsend_email(email_user, password)" in second
    third = server.requests[3].messages[-1]["content"]
    assert "Attempt 1: FAILED" in third
    assert "Attempt 2: FAILED\nError: AI Validation Failed: email_user is None" in third
    assert "Code preview: # STAGE: TASK\nemail_user = context.get('user')" in third


async def test_all_attempts_failing_ends_failed_with_every_attempt_recorded(
    settings: Settings, server: ScriptedModel
):
    server.push(*(code_reply(f"context['x'] = 1 / 0  # try {n}") for n in range(2)))
    ran = await run_task(settings, "Divide by nothing", {"a": 1}, max_attempts=2)

    assert ran.state.status == "failed"
    assert ran.state.stopped_reason == "failed_after_retries"
    metadata = ran.metadata
    assert metadata["status"] == "failed_after_retries"
    assert metadata["final_error"] == "Failed after 2 attempts: ZeroDivisionError: division by zero"
    assert [a["attempt"] for a in metadata["all_attempts"]] == [1, 2]
    assert metadata["all_attempts"][1]["code"].endswith("# try 1")
    assert ran.context["a"] == 1 and "x" not in ran.context
    [row] = ran.chain
    assert row["status"] == "failed" and row["error_message"] == metadata["final_error"]
    assert ran.state.errors[-1].message == metadata["final_error"]


async def test_a_value_json_cannot_hold_is_named_by_its_key_path_and_retried(
    settings: Settings, server: ScriptedModel
):
    server.push(
        code_reply("import datetime\ncontext['when'] = {'at': datetime.date(2026, 1, 2)}"),
        code_reply(
            "import datetime\ncontext['when'] = {'at': datetime.date(2026, 1, 2).isoformat()}"
        ),
        verdict(True, "the date is an ISO string"),
    )
    ran = await run_task(settings, "Record the date", {"n": 1})

    assert ran.state.status == "completed"
    assert ran.context["when"] == {"at": "2026-01-02"}
    refused = [c for c in ran.of(CheckVerdict) if not c.passed]
    assert [c.check for c in refused] == ["serialization"]
    assert "context['when']['at']: datetime.date" in refused[0].message
    assert "context['when']['at']: datetime.date" in server.requests[1].messages[-1]["content"]


async def test_a_second_run_on_a_new_context_of_the_same_shape_makes_no_model_call(
    settings: Settings, server: ScriptedModel
):
    server.push(code_reply(DISCOUNT_CODE), verdict(True, "ok"))
    first = await run_task(settings, DISCOUNT_TASK, {"total": 1500}, session_id="first0000001")
    asked = len(server.requests)

    again = await run_task(
        settings,
        "  calculate discount (10%  if total > 1000). ",
        {"total": 2000},
        session_id="again0000001",
    )

    assert len(server.requests) == asked  # zero model calls
    assert again.state.status == "completed"
    assert again.context["discount"] == 200.0 and again.context["final_total"] == 1800.0
    assert again.metadata["cache_hit"] is True and again.metadata["cache_match"] == "exact"
    assert again.metadata["generated_code"] == first.metadata["generated_code"]
    assert again.metadata["tokens_input_estimated"] == 0 and again.metadata["model_calls"] == 0
    assert not again.of(LLMCall)
    [attempt] = again.of(AttemptStarted)
    assert attempt.cached
    checks = [(c.check, c.passed) for c in again.of(CheckVerdict)]
    assert checks == [("context_access", True), ("serialization", True)]
    cache = TaskCache(settings.db)
    [entry] = await cache.entries()
    await cache.close()
    assert entry.hits == 1 and entry.session_id == "first0000001"


async def test_another_shape_or_no_cache_generates_and_a_failing_hit_is_replaced(
    settings: Settings, server: ScriptedModel
):
    server.push(code_reply("context['n2'] = context['n'] * 2"), verdict(True, "ok"))
    await run_task(settings, "Double n", {"n": 2}, session_id="first0000001")

    # the same task on a string n: another schema, so new code is generated
    server.push(code_reply("context['n2'] = context['n'] * 2"), verdict(True, "ok"))
    other = await run_task(settings, "Double n", {"n": "ab"}, session_id="other0000001")
    assert other.metadata["cache_hit"] is False and len(server.requests) == 4

    # --no-cache: generated again even though an entry exists, and nothing is stored
    server.push(code_reply("context['n2'] = context['n'] + context['n']"), verdict(True, "ok"))
    fresh = await run_task(settings, "Double n", {"n": 5}, cache=False, session_id="fresh0000001")
    assert fresh.metadata["cache_hit"] is False and len(server.requests) == 6
    cache = TaskCache(settings.db)
    entries = await cache.entries()
    await cache.close()
    assert {entry.session_id for entry in entries} == {"first0000001", "other0000001"}
    assert all("+" not in entry.task_code for entry in entries)


async def test_a_cached_code_that_fails_falls_back_to_generation_and_is_replaced(
    settings: Settings, server: ScriptedModel
):
    server.push(code_reply("context['ratio'] = context['a'] / context['b']"), verdict(True, "ok"))
    await run_task(settings, "Divide a by b", {"a": 4, "b": 2}, session_id="first0000001")
    server.push(
        code_reply("b = context['b']\ncontext['ratio'] = context['a'] / b if b else None"),
        verdict(True, "no ratio when b is zero"),
    )
    ran = await run_task(settings, "Divide a by b", {"a": 1, "b": 0}, session_id="again0000001")

    assert ran.state.status == "completed" and ran.context["ratio"] is None
    assert ran.metadata["cache_hit"] is False and ran.metadata["attempts"] == 1
    logs = [log.message for log in ran.of(Log)]
    assert any(message.startswith("the cached code failed on this context") for message in logs)
    cache = TaskCache(settings.db)
    [entry] = await cache.entries()
    assert entry.session_id == "again0000001" and "if b else None" in entry.task_code
    await cache.close()


async def test_the_budget_stops_before_a_call_it_cannot_pay_for(
    settings: Settings, server: ScriptedModel
):
    ran = await run_task(settings, DISCOUNT_TASK, {"total": 1500}, budget=0.0000001)

    assert server.requests == []
    assert ran.state.status == "stopped" and ran.state.stopped_reason == "budget"
    assert ran.metadata["status"] == "budget_exceeded"
    assert ran.metadata["final_error"].startswith("stopped: task budget: the next call would cost")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_an_unreachable_model_opens_the_circuit_and_is_not_retried(settings: Settings):
    unreachable = settings.model_copy(update={"api_base": f"http://127.0.0.1:{closed_port()}/v1"})
    breaker = CircuitBreaker(cool_down=300)
    workflow = parse_workflow(
        {"nodes": [{"id": "one", "prompt": "Add one"}, {"id": "two", "prompt": "Add two"}]}, "wf"
    )
    launch = prepare(
        WorkflowRequest(workflow=workflow, context={"n": 1}),
        unreachable,
        session_id="down00000001",
        breaker=breaker,
    )
    ran = await record_task(settings.db, launch)

    assert ran.state.status == "failed" and ran.state.stopped_reason == "model_unreachable"
    assert [p.name for p in ran.state.phases] == ["one"]  # node two never started
    assert ran.state.errors[-1].message.startswith("cannot reach the server at http://127.0.0.1")
    assert ran.metadata["status"] == "model_unreachable" and ran.metadata["attempts"] == 1

    again = await run_task(
        unreachable, "Add one", {"n": 1}, breaker=breaker, session_id="down00000002"
    )
    assert again.metadata["status"] == "circuit_open"
    said = again.state.errors[-1].message
    assert said.startswith("the model server at http://127.0.0.1:") and "failed 0 s ago" in said
    assert said.endswith("it is tried again in 300 s; a new `tui-agent` command tries it at once")
    assert not again.of(LLMCall)


ADD_ONE = "context['n'] = context['n'] + 1"


def broken_reply() -> Reply:
    """A reply the server drops after its first chunk: the server failed (no retry helps)."""
    return text("x" * 200, stream=True, disconnect_after=1)


async def test_the_circuit_is_per_server_and_a_retry_goes_through_at_once(
    settings: Settings, server: ScriptedModel
):
    breaker = CircuitBreaker(cool_down=300, retry_hint="press R on the session to retry now")
    target = model_server(settings.model, settings.api_base)
    server.push(broken_reply())
    down = await run_task(settings, "Add one", {"n": 1}, breaker=breaker, session_id="down01")
    assert down.metadata["status"] == "model_unreachable" and breaker.is_open(target)

    asked = len(server.requests)
    blocked = await run_task(settings, "Add one", {"n": 1}, breaker=breaker, session_id="down02")
    assert blocked.metadata["status"] == "circuit_open" and len(server.requests) == asked
    assert blocked.state.errors[-1].message.endswith("press R on the session to retry now")

    with ScriptedModel([code_reply(ADD_ONE), verdict(True, "n went up by one")]) as other:
        elsewhere = settings.model_copy(update={"api_base": other.api_base})
        unaffected = await run_task(
            elsewhere, "Add one", {"n": 1}, breaker=breaker, session_id="other1"
        )
    assert unaffected.state.status == "completed" and unaffected.context["n"] == 2

    server.push(code_reply(ADD_ONE), verdict(True, "n went up by one"))  # the server is back
    assert breaker.close(target)  # the user's retry
    back = await run_task(settings, "Add one", {"n": 1}, breaker=breaker, session_id="back01")
    assert back.state.status == "completed" and back.context["n"] == 2
    assert not breaker.is_open(target)


async def test_after_the_cool_down_the_next_task_probes_and_its_success_closes_the_circuit(
    settings: Settings, server: ScriptedModel
):
    breaker = CircuitBreaker(cool_down=0)
    target = model_server(settings.model, settings.api_base)
    server.push(broken_reply())
    down = await run_task(settings, "Add one", {"n": 1}, breaker=breaker, session_id="down01")
    assert down.metadata["status"] == "model_unreachable" and breaker.is_open(target)

    server.push(code_reply(ADD_ONE), verdict(True, "n went up by one"))
    probe = await run_task(settings, "Add one", {"n": 1}, breaker=breaker, session_id="probe1")
    assert probe.state.status == "completed" and not breaker.is_open(target)


async def test_the_model_looks_up_documentation_while_writing(
    settings: Settings, server: ScriptedModel
):
    server.push(
        tool_calls(
            ToolCallReply("search_documentation", {"library": "json", "query": "dumps indent"})
        ),
        code_reply("import json\ncontext['text'] = json.dumps(context['data'], indent=2)"),
        verdict(True, "pretty JSON"),
    )
    ran = await run_task(settings, "Pretty-print data as JSON text", {"data": {"a": 1}})

    assert ran.state.status == "completed"
    [call] = ran.of(ToolCall)
    [result] = ran.of(ToolResult)
    assert call.name == "search_documentation" and call.arguments == {
        "library": "json",
        "query": "dumps indent",
    }
    assert result.ok and "dumps" in result.output
    assert ran.metadata["tool_calls"] == [
        {
            "function": "search_documentation",
            "arguments": {"library": "json", "query": "dumps indent"},
        }
    ]
    assert ran.metadata["total_tool_calls"] == 1
    assert server.requests[0].tools[0]["function"]["name"] == "search_documentation"
    tool_message = server.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "dumps" in tool_message["content"]


async def test_a_model_without_tool_calling_looks_up_with_call_lines(
    tmp_path: Path, server: ScriptedModel, backend: str
):
    settings = Settings(
        model="deepseek/deepseek-reasoner",  # litellm says it cannot call tools
        api_base=server.api_base,
        db=tmp_path / "s.db",
        sandbox=backend,
        workspace=tmp_path / "workspace",
    )
    server.push(
        text('Let me check.\nCALL search_documentation {"library": "json", "query": "dumps"}'),
        code_reply("import json\ncontext['text'] = json.dumps(context['data'])"),
        verdict(True, "ok"),
    )
    ran = await run_task(settings, "Serialise data", {"data": [1]})

    assert ran.state.status == "completed" and ran.context["text"] == "[1]"
    assert server.requests[0].tools is None
    assert "CALL search_documentation" in server.requests[0].messages[0]["content"]
    assert server.requests[1].messages[-1]["content"].startswith("RESULT search_documentation")
    assert len(ran.of(ToolResult)) == 1


async def test_a_reply_without_code_is_asked_again_once_then_the_attempt_fails(
    settings: Settings, server: ScriptedModel
):
    server.push(
        text("I would need more information to do that."),
        text("Sorry, I cannot."),
        code_reply("context['done'] = True"),
        verdict(True, "done"),
    )
    ran = await run_task(settings, "Mark as done", {"n": 1})

    assert ran.state.status == "completed" and ran.metadata["attempts"] == 2
    assert [c.purpose for c in ran.of(LLMCall)] == ["generate", "repair", "generate", "validate"]
    assert (
        "could not be used: the reply holds no Python code block"
        in server.requests[1].messages[-1]["content"]
    )
    first_step = ran.of(AttemptStarted)[0].step
    assert ran.state.steps[first_step].model_calls == 2
    assert ran.metadata["model_calls"] == 4


async def test_a_workflow_runs_node_by_node_with_the_context_flowing(
    settings: Settings, server: ScriptedModel
):
    workflow = parse_workflow(
        {
            "model": settings.model,
            "nodes": [
                {
                    "id": "sum",
                    "type": "ActionNode",
                    "executor": "cached",
                    "prompt": "Sum the values",
                },
                {"id": "label", "prompt": "Label the sum", "model": settings.model, "timeout": 20},
            ],
        },
        "wf.json",
    )
    server.push(
        code_reply("context['sum'] = sum(context['values'])"),
        verdict(True, "ok"),
        code_reply("context['label'] = 'big' if context['sum'] > 5 else 'small'"),
        verdict(True, "ok"),
    )
    launch = prepare(
        WorkflowRequest(workflow=workflow, workflow_file="wf.json", context={"values": [1, 2, 3]}),
        settings,
        session_id="flow00000001",
        cache=TaskCache(settings.db),
    )
    ran = await record_task(settings.db, launch)

    assert ran.state.status == "completed"
    assert ran.context["sum"] == 6 and ran.context["label"] == "big"
    assert [p.name for p in ran.state.phases] == ["sum", "label"]
    assert [r.node for r in ran.of(TaskResult)] == ["sum", "label"]
    assert [row["node_id"] for row in ran.chain] == ["sum", "label"]
    assert ran.chain[0]["ai_metadata"]["model_source"] == "workflow"
    assert ran.chain[1]["ai_metadata"]["model_source"] == "node"
    assert ran.chain[1]["input_context"]["sum"] == 6
    started = launch.started
    assert isinstance(started, SessionStarted) and started.params["nodes"] == ["sum", "label"]


async def test_other_words_for_the_same_task_hit_and_a_near_miss_does_not(
    settings: Settings, server: ScriptedModel
):
    server.push(code_reply(DISCOUNT_CODE), verdict(True, "ok"))
    await run_task(settings, DISCOUNT_TASK, {"total": 1500}, session_id="first0000001")
    asked = len(server.requests)

    reworded = "Please compute the discount (10 % if the total is above 1000)"
    hit = await run_task(settings, reworded, {"total": 3000}, session_id="again0000001")
    assert len(server.requests) == asked
    assert hit.metadata["cache_match"] == "semantic" and hit.context["discount"] == 300.0
    assert any(log.message.startswith("cache hit (semantic") for log in hit.of(Log))

    # the reworded task is now cached under its own words too: the next time is exact
    exact = await run_task(settings, reworded, {"total": 10}, session_id="third0000001")
    assert exact.metadata["cache_match"] == "exact" and len(server.requests) == asked

    server.push(
        code_reply(
            "total = context['total']\ncontext['discount'] = total * 0.10 if total < 1000 else 0.0"
        ),
        verdict(True, "ok"),
    )
    miss = await run_task(
        settings,
        "Calculate discount (10% if total < 1000)",
        {"total": 500},
        session_id="miss00000001",
    )
    assert miss.metadata["cache_hit"] is False and miss.context["discount"] == 50.0
