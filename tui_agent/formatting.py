"""Short text forms of session figures, shared by the TUI and the headless printer."""

from __future__ import annotations

import json
from pathlib import Path

from tui_agent.events import Artifact

UNKNOWN = "—"


def format_cost(cost: float | None, complete: bool = True) -> str:
    """`$0.0123`; `—` when no price is known; a `+?` suffix when some calls had none."""
    if cost is None:
        return UNKNOWN
    return f"${cost:.4f}" + ("" if complete else "+?")


def format_duration(seconds: float) -> str:
    """`42s`, `3:05`, `1:02:03`."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{minutes}:{secs:02d}"
    return f"{secs}s"


def format_tokens(tokens: int) -> str:
    """`950`, `12.3k`, `4.1M`."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"


def display_path(path: Path) -> str:
    """`path` with the home directory shortened to `~`."""
    try:
        return "~/" + str(path.resolve().relative_to(Path.home().resolve()))
    except ValueError:
        return str(path)


def artifact_text(artifact: Artifact) -> str:
    """An artifact's content as it is read: JSON pretty-printed (as written if it is not JSON)."""
    if artifact.format == "json":
        try:
            return json.dumps(json.loads(artifact.content), indent=2, ensure_ascii=False)
        except ValueError:
            return artifact.content
    return artifact.content.rstrip("\n")
