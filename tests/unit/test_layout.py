"""The tree stays easy to read: small package folders, docstrings that describe the code.

Import rules (textual only in tui/, agents and web never import the store, ...) are
import-linter contracts in pyproject.toml, run by `make test`.
"""

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tui_agent"
MAX_MODULES = 16
CITATION = re.compile(r"\b(seed \d{3}|seed \d\b|issue \d+|[Pp]hase \d)")


def package_folders() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize("folder", package_folders(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_package_folder_holds_at_most_16_modules(folder: Path) -> None:
    modules = sorted(p.name for p in folder.glob("*.py"))
    assert len(modules) <= MAX_MODULES, f"{folder.name}/ holds {len(modules)}: {modules}"


def test_docstrings_say_what_the_code_does_not_which_document_asked() -> None:
    cited = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if CITATION.search(line)
    ]
    assert not cited, "\n".join(cited)
