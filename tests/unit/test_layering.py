"""Domain code never imports the UI (STYLE.md: domain apart from UI, and checked)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tui_agent"
DOMAIN = [
    "events.py",
    "session.py",
    "config.py",
    "printer.py",
    "store",
    "analysis",
    "sandbox",
    "agents",
    "web",
    "llm",
]


def domain_files():
    for name in DOMAIN:
        path = PACKAGE / name
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def imported_modules(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


@pytest.mark.parametrize("path", list(domain_files()), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_domain_module_does_not_import_the_ui(path):
    bad = [
        m
        for m in imported_modules(path)
        if m == "textual" or m.startswith(("textual.", "tui_agent.tui"))
    ]
    assert not bad, f"{path.name} imports {bad}"
