"""The task executor's pure parts: reading replies, the checks, the context's schema and
summary, masking secrets, workflow files, the metadata's keys."""

from __future__ import annotations

import json

import pytest

from tui_agent.agents.task.checks import (
    UnreadableVerdict,
    context_access_problem,
    parse_verdict,
    serialization_problem,
)
from tui_agent.agents.task.context import (
    context_change,
    context_schema,
    schema_hash,
    summarise_context,
)
from tui_agent.agents.task.prompts import FailedAttempt, code_preview, error_history
from tui_agent.agents.task.reply import NoCode, parse_code_reply
from tui_agent.agents.task.workflow import WorkflowError, parse_workflow
from tui_agent.redaction import MASK, is_secret_key, mask_secrets


@pytest.mark.parametrize(
    ("reply", "code", "stage", "marked"),
    [
        ("```python\n# STAGE: TASK\nx = 1\n```", "# STAGE: TASK\nx = 1", "task", True),
        ("Let me look first.\n```py\n# STAGE: ANALYSIS\nresult = {}\n```", None, "analysis", True),
        ("```\ncontext['a'] = 1\n```", "context['a'] = 1", "task", False),
        ('{"code": "# stage: analysis\\nresult = 1"}', None, "analysis", True),
        ('```json\n{"code": ["a = 1", "context[\'a\'] = a"]}\n```', None, "task", False),
        ("import json\ncontext['j'] = json.dumps(context)", None, "task", False),
    ],
)
def test_code_is_read_from_every_reply_shape(reply, code, stage, marked):
    parsed = parse_code_reply(reply)
    if code is not None:
        assert parsed.code == code
    assert (parsed.stage, parsed.marked) == (stage, marked)


def test_a_dict_literal_in_code_is_code_not_a_json_reply():
    parsed = parse_code_reply("```python\ncontext['cfg'] = {\"code\": 1}\n```")
    assert parsed.code == "context['cfg'] = {\"code\": 1}"


def test_an_analysis_and_a_task_block_in_one_reply_keep_the_analysis():
    reply = "```python\n# STAGE: ANALYSIS\nresult = 1\n```\n\n```python\n# STAGE: TASK\nx = 2\n```"
    parsed = parse_code_reply(reply)
    assert parsed.stage == "analysis" and "x = 2" not in parsed.code
    assert parsed.repairs


@pytest.mark.parametrize("reply", ["", "  ", "I cannot do that.", '{"thought": "hmm"}'])
def test_a_reply_without_code_is_refused(reply):
    with pytest.raises(NoCode):
        parse_code_reply(reply)


def test_undefined_names_are_refused_with_how_to_read_them():
    problem = context_access_problem("send_email(email_user, pasword)", ["email_user", "password"])
    assert problem is not None
    assert "name 'email_user' (line 1) is used but never defined" in problem
    assert "email_user = context['email_user']" in problem
    assert "did you mean the context value 'password'?" in problem
    assert "name 'send_email'" in problem
    assert context_access_problem("import json\nx = json.dumps(context)", []) is None
    assert "import json first" in (context_access_problem("x = json.dumps(1)", []) or "")
    tool = context_access_problem("search_documentation('pandas', 'x')", [])
    assert "a tool you call while writing the code" in (tool or "")
    assert context_access_problem("def f(:\n", []) == "SyntaxError: invalid syntax (line 1)"


def test_only_values_of_the_context_or_result_count_for_serialization():
    assert serialization_problem([]) is None
    problem = serialization_problem(["context['when']: datetime.date"])
    assert problem is not None and "context['when']: datetime.date" in problem


@pytest.mark.parametrize(
    ("reply", "valid", "reason"),
    [
        ('{"valid": true, "reason": "fine"}', True, "fine"),
        ('Sure:\n```json\n{"valid": false, "reason": "empty"}\n```', False, "empty"),
        ('Verdict: {"valid": "yes", "reason": "  ok \\n now "} done', True, "ok now"),
        ('{"valid": false}', False, "(no reason given)"),
    ],
)
def test_verdicts_are_read_in_any_wrapping(reply, valid, reason):
    verdict = parse_verdict(reply)
    assert (verdict.valid, verdict.reason) == (valid, reason)


def test_an_unreadable_verdict_raises():
    with pytest.raises(UnreadableVerdict):
        parse_verdict("looks good to me")


def test_the_schema_holds_keys_and_types_never_values():
    one = {"total": 1500, "items": [{"sku": "a", "qty": 1}], "note": None}
    two = {"note": None, "items": [{"qty": 7, "sku": "zz"}, {"sku": "b", "qty": 3}], "total": 9}
    assert context_schema(one) == context_schema(two)
    assert schema_hash(context_schema(one)) == schema_hash(context_schema(two))
    assert context_schema({"total": 1.5}) != context_schema({"total": 1})
    assert context_schema({"a": 1, "_ai_metadata": {}}) == context_schema({"a": 2})
    assert "1500" not in json.dumps(context_schema(one))


def test_the_summary_describes_data_without_pasting_it_or_its_secrets():
    pdf = "JVBERi0xLjQK" + "A" * 5000
    summary = summarise_context({"pdf": pdf, "api_key": "sk-abcdefgh", "n": 3})
    assert "base64 of a PDF document" in summary and "A" * 300 not in summary
    assert "sk-abcdefgh" not in summary and "a secret" in summary
    assert "context['n']: int: 3" in summary


def test_the_change_lists_added_changed_and_removed_keys():
    change = context_change({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 5, "d": 4, "_ai_metadata": 1})
    assert (change.added, change.changed, change.removed) == (("d",), ("b",), ("c",))


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("email_password", True),
        ("API_KEY", True),
        ("authToken", True),
        ("x-api-key", True),
        ("stripe_key", True),
        ("client_secret", True),
        ("keyword", False),
        ("author", False),
        ("max_tokens", False),
        ("sort_key", False),
        ("passenger", False),
    ],
)
def test_secret_looking_keys(key, secret):
    assert is_secret_key(key) is secret


def test_masking_reaches_every_depth_and_leaves_the_original_alone():
    data = {"smtp": {"password": "p"}, "rows": [{"token": "t", "v": 1}], "token": None}
    masked = mask_secrets(data)
    assert masked == {"smtp": {"password": MASK}, "rows": [{"token": MASK, "v": 1}], "token": None}
    assert data["smtp"]["password"] == "p"


def test_the_error_history_follows_the_spec_format():
    history = error_history(
        [
            FailedAttempt(1, "NameError: name 'email_user' is not defined", "send_email(a, b)"),
            FailedAttempt(2, "AI Validation Failed: x is None", "a = 1\nb = 2\nc = 3\nd = 4"),
        ]
    )
    assert history.startswith(
        "Attempt 1: FAILED\nError: NameError: name 'email_user' is not defined\n"
        "Code preview: send_email(a, b)\n\nAttempt 2: FAILED"
    )
    assert code_preview("a = 1\nb = 2\nc = 3\nd = 4") == "a = 1\nb = 2\nc = 3..."


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be a JSON object"),
        ({"nodes": []}, "nodes: List should have at least 1 item"),
        ({"nodes": [{"id": "a", "prompt": " "}]}, "the prompt is blank"),
        ({"nodes": [{"id": "a", "prompt": "p", "promt": "x"}]}, "unknown key"),
        ({"nodes": [{"id": "a", "prompt": "p", "timeout": 0}]}, "greater than 0"),
    ],
)
def test_bad_workflows_say_where(data, message):
    with pytest.raises(WorkflowError, match=message):
        parse_workflow(data, "wf.json")


def test_models_resolve_node_then_workflow_then_default():
    workflow = parse_workflow(
        {
            "model": "w",
            "nodes": [{"id": "a", "prompt": "p", "model": "n"}, {"id": "b", "prompt": "q"}],
        },
        "wf",
    )
    assert workflow.resolve_model(workflow.nodes[0], "d") == ("n", "node")
    assert workflow.resolve_model(workflow.nodes[1], "d") == ("w", "workflow")
    bare = parse_workflow({"nodes": [{"id": "a", "prompt": "p"}]}, "wf")
    assert bare.resolve_model(bare.nodes[0], "d") == ("d", "default")
