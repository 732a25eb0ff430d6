"""The check a program passes before it runs: each refusal names what and what to use."""

import textwrap

import pytest

from tui_agent.tools import check_program, refusal_text

WORKSPACE = "use workspace_tools.read_workspace_file / update_workspace_file / list_workspace"
TOOLS = "call the generated tool functions (see discover_code_files) instead"
RELATIVE = "use a path relative to the workspace, e.g. data/file.txt"


@pytest.mark.parametrize(
    ("code", "what", "instead"),
    [
        ("import subprocess", "forbidden import `subprocess`", TOOLS),
        ("import subprocess as sp\nsp.run(['ls'])", "forbidden import `subprocess`", TOOLS),
        ("from ctypes import CDLL", "forbidden import `ctypes`", TOOLS),
        ("import socket", "forbidden import `socket`", "the program has no network"),
        ("from urllib.request import urlopen", "forbidden import `urllib.request`", TOOLS),
        ("import importlib", "forbidden import `importlib`", "plain import statement"),
        ("__import__('os')", "forbidden call `__import__()`", "plain import statement"),
        ("import os\nos.system('ls')", "forbidden call `os.system()`", TOOLS),
        ("import os\nos.execvp('ls', ['ls'])", "forbidden call `os.execvp()`", TOOLS),
        ("from os import spawnl", "forbidden import `os.spawnl`", TOOLS),
        ("import shutil\nshutil.rmtree('data')", "forbidden call `shutil.rmtree()`", WORKSPACE),
        ("eval('1 + 1')", "forbidden call `eval()`", "write the code itself"),
        ("exec('x = 1')", "forbidden call `exec()`", "write the code itself"),
        ("print(open('data.txt').read())", "direct file access `open()`", WORKSPACE),
        ("import io\nio.open('x')", "forbidden call `io.open()`", WORKSPACE),
        (
            "from pathlib import Path\nPath('a.txt').write_text('x')",
            "direct file access `.write_text()` on a path",
            WORKSPACE,
        ),
        (
            "import pathlib\n(pathlib.Path('d') / 'a').read_text()",
            "direct file access `.read_text()` on a path",
            WORKSPACE,
        ),
        ("import os\nos.remove('a')", "forbidden call `os.remove()`", WORKSPACE),
        ("import os\nfor f in os.listdir('.'): pass", "forbidden call `os.listdir()`", WORKSPACE),
        (
            "path = '/etc/passwd'",
            "path outside boundary: '/etc/passwd' is an absolute path",
            RELATIVE,
        ),
        (
            "path = '../secret.txt'",
            "path outside boundary: '../secret.txt' goes up with `..`",
            RELATIVE,
        ),
        ("path = f'data/../../{x}'", "goes up with `..`", RELATIVE),
    ],
)
def test_a_refusal_names_what_and_the_alternative(code, what, instead):
    refusals = check_program(code)
    assert refusals, code
    text = refusal_text(refusals)
    assert text.startswith("Error: validation failed, the program was not run:")
    assert what in text and instead in text


def test_every_refusal_is_listed_with_its_line():
    code = "import json\nimport subprocess\nx = open('a')\n"
    assert [(r.line, r.what) for r in check_program(code)] == [
        (2, "forbidden import `subprocess`"),
        (3, "direct file access `open()`"),
    ]


def test_a_program_that_does_not_parse_is_refused_with_the_parser_message():
    [refusal] = check_program("def broken(:\n  pass")
    assert refusal.line == 1 and refusal.what.startswith("the program does not parse")


def test_ordinary_programs_pass():
    code = textwrap.dedent(
        """
        import io, json, os, sys, re, asyncio
        from collections import Counter
        from shop_tools import get_price, list_products
        import workspace_tools

        buffer = io.StringIO()
        products = json.loads(list_products())
        counts = Counter(p["category"] for p in products)
        print(os.environ.get("HOME"), os.path.join("data", "out.csv"), sys.argv[1:])
        print("a/b".split("/"), "https://example.org/x", "1/2")
        print(workspace_tools.update_workspace_file(filepath="data/out.csv", content="x"))
        """
    )
    assert check_program(code) == []
