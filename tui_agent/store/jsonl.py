"""Exported session files: one stored event per line, seq 1..n of one session."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from pydantic import ValidationError

from tui_agent.events import EVENT_ADAPTER, SCHEMA_VERSION, Event, EventSchemaError, parse_event
from tui_agent.json_limits import JsonTooDeep, check_depth
from tui_agent.json_limits import loads as bounded_loads
from tui_agent.store.errors import JsonlError, StoreError

MB = 1_000_000
MAX_FILE_MB = 64
"""The largest session file read by default (`sessions import --max-mb` raises it)."""
MAX_LINE_MB = 32
"""The largest line (one event) of a session file, whatever the file's limit."""


def _validation_reason(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    if error["type"] == "union_tag_invalid":
        return f"unknown event type {error['ctx']['tag']!r}"
    if error["type"] == "union_tag_not_found":
        return "not an event (no 'type' field)"
    kind, *where = error["loc"]
    place = ".".join(str(part) for part in where) or "event"
    return f"invalid {kind} event: {place}: {error['msg']}"


def _parse_line(path: Path | str, number: int, text: str) -> Event:
    if len(text) > MAX_LINE_MB * MB:
        reason = f"a line of {len(text) / MB:,.1f} MB (an event may have {MAX_LINE_MB} MB)"
        raise JsonlError(path, number, reason)
    with suppress(ValidationError):  # fast path for a good line
        event = EVENT_ADAPTER.validate_json(text)
        if event.schema_version <= SCHEMA_VERSION:
            try:
                check_depth(text)
            except JsonTooDeep as exc:
                raise JsonlError(path, number, str(exc)) from None
            return event
    # Slow path: say exactly what is wrong with the line.
    try:
        data = bounded_loads(text)
    except JsonTooDeep as exc:
        raise JsonlError(path, number, str(exc)) from None
    except json.JSONDecodeError as exc:
        reason = f"not valid JSON ({exc.msg} at column {exc.colno})"
        raise JsonlError(path, number, reason) from None
    if not isinstance(data, dict):
        raise JsonlError(path, number, "not an event (a JSON object was expected)")
    try:
        return parse_event(data)
    except EventSchemaError as exc:
        raise JsonlError(path, number, str(exc)) from None
    except ValidationError as exc:
        raise JsonlError(path, number, _validation_reason(exc)) from None


def read_jsonl(path: Path, max_mb: float = MAX_FILE_MB) -> list[Event]:
    """The events of an exported session file, all checked before any is returned.

    Every non-blank line must be a valid event of one session, starting with its
    session_started event, with seq 1..n and no gaps, at most `MAX_LINE_MB` long and nested
    at most `json_limits.MAX_DEPTH` deep; otherwise `JsonlError` names the first bad line. A
    file that cannot be read, or holds more than `max_mb` MB, raises `StoreError`.
    """
    data = _read_bounded(Path(path), max_mb)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data.count(b"\n", 0, exc.start) + 1
        raise JsonlError(path, bad, "not UTF-8 text") from None
    return parse_jsonl(text.split("\n"), path)


def parse_jsonl(lines: Iterable[str], path: Path | str) -> list[Event]:
    """The events of a session's lines (as `read_jsonl` checks them; `path` names them)."""
    events: list[Event] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        event = _parse_line(path, number, line)
        if not events:
            if event.type != "session_started":
                raise JsonlError(path, number, f"expected session_started first, got {event.type}")
            if not event.session_id:
                raise JsonlError(path, number, "the event has no session_id")
        elif event.session_id != events[0].session_id:
            raise JsonlError(
                path,
                number,
                f"event of session {event.session_id!r} in a file of session "
                f"{events[0].session_id!r}",
            )
        expected = len(events) + 1
        if event.seq != expected:
            reason = f"seq {event.seq}, expected {expected} (seqs run 1..n without gaps)"
            raise JsonlError(path, number, reason)
        events.append(event)
    if not events:
        raise JsonlError(path, 1, "empty file: no events")
    return events


def _read_bounded(path: Path, max_mb: float) -> bytes:
    """The file's bytes; a StoreError when it cannot be read or holds more than `max_mb` MB
    (said before reading it, from its size)."""
    limit = int(max_mb * MB)
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = b"" if size > limit else f.read(limit + 1)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if size > limit or len(data) > limit:
        raise StoreError(
            f"{path} holds {max(size, len(data)) / MB:,.1f} MB, more than the {max_mb:g} MB a "
            "session file may have (`tui-agent sessions import --max-mb N` raises the limit)"
        )
    return data


def write_lines(path: Path, lines: Iterable[str]) -> int:
    """Write `lines` (each followed by a newline) to `path` atomically; returns the count.

    The file is written next to `path` and renamed over it, so a failed export never leaves
    a truncated file behind.
    """
    path = Path(path)
    count = 0
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o644)  # mkstemp's 0600 would hide exports from others
            for line in lines:
                f.write(line.encode("utf-8") + b"\n")
                count += 1
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StoreError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
