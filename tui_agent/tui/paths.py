"""Where the TUI's stylesheets live, in a source checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_STYLES = Path(__file__).resolve().parents[1] / "styles"
_REPO_STYLES = Path(__file__).resolve().parents[2] / "styles"


def styles_dir() -> Path:
    """The folder holding the `.tcss` files.

    A wheel ships them as `tui_agent/styles` (checked first); an editable install reads the
    top-level `styles/` of the repository.
    """
    for candidate in (_PACKAGE_STYLES, _REPO_STYLES):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"tui-agent stylesheets not found in {_PACKAGE_STYLES} or {_REPO_STYLES};"
        " reinstall tui-agent"
    )
