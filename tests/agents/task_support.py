"""Helpers for the task executor's tests: replies in the generator's format, a real PDF made
here, and a task or workflow session recorded into SQLite with the session it ran."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.scripted_model import Reply, text

from tui_agent.agents.launch import Launch
from tui_agent.events import Event
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store


def code_reply(code: str, stage: str | None = "TASK", prose: str = "", **options: Any) -> Reply:
    """A generator reply: prose, then one ```python block opening with the stage marker."""
    marker = f"# STAGE: {stage}\n" if stage else ""
    lead = f"{prose}\n\n" if prose else ""
    return text(f"{lead}```python\n{marker}{code.strip()}\n```", **options)


def verdict(valid: bool, reason: str, **options: Any) -> Reply:
    """A validator reply."""
    return text(json.dumps({"valid": valid, "reason": reason}), **options)


def pdf_with_text(lines: Iterable[str]) -> bytes:
    """A one-page PDF showing `lines` (Helvetica), with a correct cross-reference table."""
    shown = "".join(
        f"BT /F1 12 Tf 72 {720 - 18 * i} Td ({line}) Tj ET\n" for i, line in enumerate(lines)
    ).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%sendstream" % (len(shown), shown),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@dataclass
class Ran:
    """A recorded task session: its state, its stored events, what the run returned."""

    state: SessionState
    stored: list[Event]
    context: dict[str, Any]
    chain: list[dict[str, Any]]

    def of(self, kind: type) -> list:
        return [e for e in self.stored if isinstance(e, kind)]

    @property
    def metadata(self) -> dict[str, Any]:
        return self.context["_ai_metadata"]


async def record_task(db: Path, launch: Launch) -> Ran:
    """Run a prepared task or workflow session through a real SessionRecorder into the SQLite
    file `db`."""
    assert launch.task is not None
    session_id = launch.session_id
    async with await Store.open(db) as store:
        state = await SessionRecorder(store, session_id).run(launch.started, launch.events)
        stored = await store.events(session_id)
        chain = await store.chain_of_work(session_id)
    return Ran(state, stored, launch.task.context, chain)
