"""Short text forms of session figures, shared by the TUI and the headless printer."""

from __future__ import annotations

import json
from pathlib import Path

from tui_agent.events import Artifact, AttemptStarted, CheckVerdict, TaskResult

UNKNOWN = "—"
LINE_CHARS = 2_000
"""The most characters of one line (a log line, a message) a card shows."""
TEXT_CHARS = 20_000
"""The most characters of one text (a thought, an answer, a step's code) a card shows."""
TITLE_CHARS = 80
"""The most characters of a session's title made from its task."""


def clipped(text: str, limit: int = LINE_CHARS) -> str:
    """`text`, or its first `limit` characters and how many more there are: a card never
    lays out megabytes (the whole text stays in the session and its export)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def session_title(text: str) -> str:
    """`text` on one line, cut to TITLE_CHARS characters: a title for a session or a phase."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


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


def format_size(size: int) -> str:
    """`812 B`, `20.1 kB`, `3.4 MB` (powers of 1000)."""
    if size < 1000:
        return f"{size} B"
    for unit in ("kB", "MB", "GB"):
        size /= 1000  # type: ignore[assignment]
        if size < 1000 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


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


CHECK_NAMES = {
    "reply": "reply",
    "context_access": "context access",
    "serialization": "serialization",
    "output": "output",
}
METADATA_KEY = "_ai_metadata"
INTERNAL_KEYS = (METADATA_KEY, "_data_analysis")


def attempt_line(event: AttemptStarted) -> str:
    """`attempt 2/3 · node extract`, or `cached code · node extract`."""
    head = "cached code" if event.cached else f"attempt {event.attempt}/{event.max_attempts}"
    return f"{head} · node {event.node}" if event.node and event.node != "task" else head


def check_line(verdict: CheckVerdict) -> str:
    """`✓ context access` or `✗ serialization: …` (a passed output check says why)."""
    mark = "✓" if verdict.passed else "✗"
    name = CHECK_NAMES.get(verdict.check, verdict.check)
    message = verdict.message
    if not verdict.passed:
        prefix = f"{verdict.check.replace('_', ' ')}: "
        message = message.removeprefix(prefix)
    return f"{mark} {name}: {message}" if message else f"{mark} {name}"


def written_keys(event: TaskResult) -> list[str]:
    """The keys a task added or changed in its context (internal keys aside)."""
    before = event.input_context
    return [
        key
        for key, value in event.context.items()
        if key not in INTERNAL_KEYS and (key not in before or before[key] != value)
    ]


def task_result_line(event: TaskResult) -> str:
    """`success · wrote discount, final_total · 1 attempt · 2 model calls · $0.0010 · cached`."""
    metadata = event.context.get(METADATA_KEY) or {}
    parts: list[str] = [event.status]
    if event.status == "success":
        parts.append(f"wrote {', '.join(written_keys(event)) or 'nothing'}")
    elif metadata.get("final_error"):
        parts.append(str(metadata["final_error"]))
    attempts = metadata.get("attempts", 0)
    parts.append(f"{attempts} attempt{'s' if attempts != 1 else ''}")
    calls = metadata.get("model_calls", 0)
    parts.append(f"{calls} model call{'s' if calls != 1 else ''}")
    parts.append(format_cost(metadata.get("cost_usd_estimated")))
    if metadata.get("cache_hit"):
        parts.append(f"cache hit ({metadata.get('cache_match') or 'exact'})")
    return " · ".join(parts)
