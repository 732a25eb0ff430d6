"""What code sees and what comes back: the same on every backend (issue 3, item 1)."""

import textwrap
from pathlib import Path
from typing import Any

from tui_agent.events import ExecutionFinished
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult


async def run(sandbox: Sandbox, code: str, **fields: Any) -> ExecuteResult:
    fields.setdefault("timeout", 30)
    return await sandbox.execute(ExecuteRequest(code=textwrap.dedent(code), **fields))


def pairs(result: ExecuteResult) -> list[tuple[str, str]]:
    return [(line.stream, line.text) for line in result.logs]


async def test_main_is_called_with_the_args(sandbox):
    code = """
        def main(a, b, c=10):
            return {"sum": a + b + c}
    """
    result = await run(sandbox, code, args=[1, 2])
    assert result.success, result.error
    assert result.result == {"sum": 13}
    assert result.items == [{"sum": 13}]


async def test_an_async_main_is_awaited(sandbox):
    code = """
        import asyncio

        async def main(n):
            await asyncio.sleep(0.01)
            return [n, n, n]
    """
    result = await run(sandbox, code, args=[7])
    assert result.result == [7, 7, 7]
    assert result.items == [7, 7, 7]


async def test_the_entrypoint_can_be_named(sandbox):
    code = """
        def main():
            return "not me"

        def scrape(page):
            return page.upper()
    """
    result = await run(sandbox, code, args=["abc"], entrypoint="scrape")
    assert result.result == "ABC"


async def test_a_main_the_code_calls_itself_runs_once(sandbox):
    code = """
        calls = []

        def main():
            calls.append(1)
            return len(calls)

        main()
    """
    assert (await run(sandbox, code)).result == 1
    assert (await run(sandbox, "len(calls)")).result == 1


async def test_the_result_variable_is_the_value(sandbox):
    result = await run(sandbox, "result = [x * x for x in range(3)]\nprint('done')")
    assert result.result == [0, 1, 4]
    assert pairs(result) == [("stdout", "done")]


async def test_the_last_expression_is_the_value(sandbox):
    assert (await run(sandbox, "a = 2\na * 21")).result == 42
    quiet = await run(sandbox, "b = 1")
    assert quiet.success and quiet.result is None and quiet.items == []


async def test_top_level_await_works(sandbox):
    code = """
        import asyncio

        async def twice(x):
            await asyncio.sleep(0)
            return 2 * x

        await twice(21)
    """
    result = await run(sandbox, code)
    assert result.success, result.error
    assert result.result == 42


async def test_typing_names_a_hint_uses_without_importing_them_are_lent(sandbox):
    """Small models hint with typing names they never import: no NameError for a hint."""
    code = """
        def pairs(numbers: List[float], limit: Optional[int] = None) -> Dict[str, float]:
            return {str(n): n for n in numbers[:limit]}
        class Point:
            x: Any
        print(pairs([1.5, 2.5], 1), pairs.__annotations__["numbers"])
    """
    result = await run(sandbox, code)
    assert result.success, result.error
    assert pairs(result) == [("stdout", "{'1.5': 1.5} typing.List[float]")]


async def test_a_hint_naming_nothing_known_still_fails_and_own_names_win(sandbox):
    unknown = await run(sandbox, "def f(x: Undefined) -> None:\n    pass")
    assert not unknown.success and unknown.error.type == "NameError"
    own = await run(
        sandbox, "List = list\ndef f(x: List) -> List:\n    return x\nprint(f.__annotations__)"
    )
    assert own.success, own.error
    assert pairs(own) == [("stdout", "{'x': <class 'list'>, 'return': <class 'list'>}")]


async def test_dataclasses_in_code_that_execs_code_still_work(sandbox):
    code = """
        source = "import dataclasses\\n@dataclasses.dataclass\\nclass P:\\n    x: int\\nprint(P(1))"
        exec(compile(source, "<inner>", "exec"), {"__name__": "not_a_module"})
    """
    result = await run(sandbox, code)
    assert result.success, result.error
    assert pairs(result) == [("stdout", "P(x=1)")]


async def test_globals_persist_between_runs(sandbox):
    code = """
        import json
        counter = 1

        def bump():
            global counter
            counter += 1
            return counter
    """
    await run(sandbox, code)
    assert (await run(sandbox, "bump()")).result == 2
    later = await run(sandbox, "json.dumps(bump())")
    assert later.result == "3"
    assert not later.state_lost


async def test_reset_forgets_the_globals(sandbox):
    await run(sandbox, "kept = 1")
    await sandbox.reset()
    assert (await run(sandbox, "'kept' in globals()")).result is False


async def test_the_context_goes_in_and_comes_back_updated(sandbox):
    code = """
        context["total"] = sum(context["values"])
        context["values"].append(4)
    """
    result = await run(sandbox, code, context={"values": [1, 2, 3], "client": "Acme"})
    assert result.context == {"values": [1, 2, 3, 4], "client": "Acme", "total": 6}


async def test_url_and_html_are_given_to_the_code(sandbox):
    page = "<ul><li>a</li><li>b</li></ul>"
    result = await run(sandbox, "[url, html.count('<li>')]", url="https://example.com/x", html=page)
    assert result.result == ["https://example.com/x", 2]


async def test_values_json_cannot_hold_are_reported_by_key_path(sandbox):
    code = """
        import datetime
        import email.message

        message = email.message.Message()
        message["From"] = "ana@example.com"
        context["email_obj"] = message
        context["email_from"] = message["From"]
        result = [1, 2, 3, {"when": datetime.datetime(2024, 1, 2), "ok": True}]
    """
    result = await run(sandbox, code, context={})
    assert result.success
    assert result.non_serializable == [
        "result[3]['when']: datetime.datetime",
        "context['email_obj']: email.message.Message",
    ]
    assert result.result[:3] == [1, 2, 3]
    assert result.result[3]["ok"] is True
    assert "datetime.datetime(2024, 1, 2, 0, 0)" in result.result[3]["when"]
    assert result.context["email_from"] == "ana@example.com"


async def test_stdout_and_stderr_come_back_in_order(sandbox):
    code = """
        import os
        import subprocess
        import sys

        print("one")
        print("two", file=sys.stderr)
        sys.stdout.write("thr")
        sys.stdout.write("ee\\n")
        subprocess.run([sys.executable, "-c", "print('four')"], check=True)
        os.write(2, b"five\\n")
        print("six", end="")
    """
    result = await run(sandbox, code)
    assert pairs(result) == [
        ("stdout", "one"),
        ("stderr", "two"),
        ("stdout", "three"),
        ("stdout", "four"),
        ("stderr", "five"),
        ("stdout", "six"),
    ]
    assert not result.logs_truncated


async def test_output_over_one_mib_is_truncated_with_a_mark(sandbox):
    code = """
        for i in range(30_000):
            print(f"{i:08d}" + "x" * 92)
        "finished"
    """
    result = await run(sandbox, code)
    assert result.success and result.result == "finished"
    assert result.logs_truncated
    *kept, mark = result.logs
    assert mark.stream == "stderr" and mark.text.startswith("[output truncated:")
    assert kept[0].text == "00000000" + "x" * 92
    size = sum(len(line.text) + 1 for line in kept)
    assert 1_000_000 < size <= 1 << 20


async def test_an_error_has_type_message_and_the_users_traceback(sandbox):
    code = """
        def parse(row):
            return int(row["price"])

        def main():
            return [parse(row) for row in [{"price": "3"}, {"price": "n/a"}]]
    """
    result = await run(sandbox, code)
    assert not result.success and result.result is None
    assert result.error.type == "ValueError"
    assert result.error.message == "invalid literal for int() with base 10: 'n/a'"
    trace = result.error.traceback
    assert trace.startswith("Traceback (most recent call last):")
    assert 'File "<code>", line 3, in parse' in trace
    assert 'return int(row["price"])' in trace
    assert "kernel.py" not in trace
    assert trace.rstrip().endswith("ValueError: invalid literal for int() with base 10: 'n/a'")


async def test_code_from_an_earlier_run_is_named_in_tracebacks(sandbox):
    await run(sandbox, "def divide():\n    return 1 / 0")
    result = await run(sandbox, "divide()")
    assert result.error.type == "ZeroDivisionError"
    assert 'File "<code of run' in result.error.traceback
    assert "return 1 / 0" in result.error.traceback


async def test_a_syntax_error_names_its_line(sandbox):
    result = await run(sandbox, "x = 1\ndef broken(:\n    pass")
    assert result.error.type == "SyntaxError"
    assert result.error.message.endswith("(line 2)")
    assert 'File "<code>", line 2' in result.error.traceback


async def test_sys_exit_is_an_error_not_a_lost_sandbox(sandbox):
    await run(sandbox, "kept = 1")
    result = await run(sandbox, "import sys\nsys.exit(4)")
    assert result.error.type == "SystemExit" and result.error.message == "4"
    assert (await run(sandbox, "kept")).result == 1


async def test_records_come_with_items_and_analysis(sandbox):
    code = """
        result = [
            {"title": "A", "price": 1.5, "link": "https://shop.example/a"},
            {"title": "B", "price": None, "link": "https://shop.example/b"},
        ]
    """
    result = await run(sandbox, code)
    assert result.items == result.result and len(result.items) == 2
    assert result.analysis.item_count == 2
    assert result.analysis.field("price").coverage == 50
    assert result.analysis.field("link").type == "url"


async def test_the_workspace_is_the_working_directory(sandbox, workspace: Path):
    result = await run(sandbox, "open('out.txt', 'w').write('hello')")
    assert result.success, result.error
    assert (workspace / "out.txt").read_text() == "hello"


def test_a_result_becomes_an_execution_finished_event():
    result = ExecuteResult(success=False, result=[1], timed_out=True, killed_reason="timeout")
    event = result.to_event(step=3)
    assert isinstance(event, ExecutionFinished)
    assert (event.step, event.result, event.timed_out, event.killed_reason) == (
        3,
        [1],
        True,
        "timeout",
    )
