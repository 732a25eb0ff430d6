"""Printed lines checked against the values the code's comments state: judged only when each
line maps to one top-level print, noted to the model when they differ."""

from __future__ import annotations

import pytest
from codeact_support import record
from support.requirements import require_backend
from support.scripted_model import ScriptedModel, shaped_reply
from support.sessions import scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.stated_outputs import Mismatch, mismatches

SORT = (
    "def sort_words(s):\n"
    "    return ' '.join(sorted(s.split()))\n"
    "\n"
    "print(sort_words('three one five'))  # Output: 'one three five'\n"
    "print(sort_words('b a'))  # Expected: 'a b'\n"
)


def test_a_print_whose_line_differs_from_its_comment_is_named():
    assert mismatches(SORT, ["five one three", "a b"]) == [
        Mismatch(4, "five one three", "'one three five'")
    ]


@pytest.mark.parametrize(
    ("code", "printed"),
    [
        ("print(1 + 1)  # Expected output: 2", ["2"]),
        ("print(0.1 + 0.2)  # -> 0.3", ["0.30000000000000004"]),
        ("print([1, 2])  # should print [1, 2]", ["[1, 2]"]),
        ("print((10, 24))  # returns (10, 24)", ["(10, 24)"]),
        ("print(3 > 2)  # Expected: True", ["True"]),
        ("print('x')  # expected: 'x'", ["x"]),
    ],
)
def test_lines_that_match_their_comment_are_no_mismatch(code, printed):
    assert mismatches(code, printed) == []


@pytest.mark.parametrize(
    ("code", "printed"),
    [
        ("print(1)  # Expected: 2 (since one is less)", ["1"]),  # not a literal
        ("print(1)  # Expected: 2", ["1", "extra"]),  # something else printed too
        ("for i in range(2):\n    print(i)  # Expected: 5", ["0", "1"]),  # not top level
        ("def f():\n    print(9)\nf()\nprint(1)  # Expected: 2", ["9", "1"]),
        ("print(1, 2)  # Expected: 3", ["1 2"]),  # more than one value
        ("print(1, end='')  # Expected: 2", ["1"]),
        ("print(1)  # a note: 2", ["1"]),  # no stated value
        ("def broken(:", ["1"]),
    ],
)
def test_nothing_is_judged_when_the_mapping_or_the_value_is_uncertain(code, printed):
    assert mismatches(code, printed) == []


DEPTHS = (
    "def depths(s):\n"
    '    """The deepest nesting of each group.\n'
    "\n"
    "    >>> depths('(()()) ((()))')\n"
    "    [2, 3]\n"
    '    >>> depths("()")\n'
    "    [1]\n"
    '    """\n'
    "    return [max(g.count('(') for g in [s])]\n"
    "\n"
    "print(depths('(()()) ((()))'))\n"
    "print(depths('()'))\n"
    "print(depths('(())'))\n"
)


def test_a_print_of_a_docstring_example_is_held_to_the_docstring():
    # Qwen2.5-Coder-1.5B printed its docstring's example, got [3] for [2, 3, 1, 3], answered
    assert mismatches(DEPTHS, ["[4]", "[1]", "[2]"]) == [
        Mismatch(11, "[4]", "[2, 3]", "the docstring of depths")
    ]
    assert mismatches(DEPTHS, ["[2, 3]", "[1]", "[9]"]) == []  # depths('(())') has no example


@pytest.mark.parametrize(
    "docstring",
    [
        ">>> f(1)\n<object at 0x1>",  # not a literal
        ">>> f(1)",  # no result shown
        ">>> x = f(1)\n>>> x\n2",  # not the expression printed
        ">>> f(2)\n2",  # another call
    ],
)
def test_docstring_examples_that_say_nothing_of_the_print_are_no_mismatch(docstring):
    code = f'def f(x):\n    """{docstring}\n    """\n    return x\n\nprint(f(1))\n'
    assert mismatches(code, ["1"]) == []


async def test_the_model_is_told_its_output_differs_from_its_comment(
    tmp_path, server: ScriptedModel
) -> None:
    require_backend("bubblewrap")
    settings = scripted_settings(server, tmp_path, "bubblewrap")
    order = "ORDER = ['a', 'b', 'one', 'three', 'five']\n"
    fixed = order + SORT.replace("sorted(s.split())", "sorted(s.split(), key=ORDER.index)")
    server.push(
        shaped_reply("fenced", "Sort the words.", "execute_code", code=SORT),
        shaped_reply("fenced", "Sort by length instead.", "execute_code", code=fixed),
        shaped_reply("fenced", "", "provide_answer", final_answer="Done."),
    )
    launch = prepare(CodeRequest(task="Sort number words."), settings)
    session = await record(settings.db, launch.started, launch.events)
    assert session.state.final_answer == "Done."
    told = server.requests[1].messages[-1]["content"]
    assert told.startswith("EXECUTION_RESULT: five one three\na b\n\nNote: the output differs")
    assert "- line 4 printed 'five one three', but its comment says it should be " in told
    assert "'one three five'" in told and "line 5" not in told
    assert "differs" not in server.requests[2].messages[-1]["content"]
