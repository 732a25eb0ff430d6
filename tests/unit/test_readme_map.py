"""The README's "where things are" map names every package and top-level module, and only those."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tui_agent"


def map_paths() -> set[str]:
    """Paths under tui_agent/ the map lists (from its indentation), e.g. "web/probe"."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Where things are", 1)[1].split("```", 2)[1]
    paths, stack = set(), []
    for line in block.splitlines():
        match = re.match(r"( *)(\S+)", line)
        if not match or match.group(2) == "tui_agent/":
            continue
        depth = len(match.group(1)) // 2 - 1
        if depth < 0:
            stack = []
            continue
        name = match.group(2).rstrip("/")
        stack = [*stack[:depth], name]
        paths.add("/".join(stack))
    return paths


def tree_paths() -> set[str]:
    """Top-level modules and packages, plus the sub-packages of agents/ and web/."""
    found = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p / "__init__.py").exists()
    }
    found = {f"{name}.py" if (PACKAGE / f"{name}.py").exists() else name for name in found}
    for parent in ("agents", "web"):
        found |= {
            f"{parent}/{p.name}"
            for p in (PACKAGE / parent).iterdir()
            if (p / "__init__.py").exists()
        }
    return found


def test_the_readme_map_matches_the_tree() -> None:
    listed, real = map_paths(), tree_paths()
    assert not real - listed, f"missing from the README map: {sorted(real - listed)}"
    assert not listed - real, f"in the README map but not in the tree: {sorted(listed - real)}"
