"""The kernel's messages as the host reads them: each line parsed and checked against its kind.

The code a kernel runs can write to the kernel's protocol pipe, so a line may be anything: not
JSON, nested thousands deep, `Infinity` where a count goes, a field of the wrong type, a message
made up to look like another run's. `read_message` turns every line into a typed message or a
one-line reason it is none (never an exception), and messages of a run carry the run's id
(a fresh random one per request) so the host takes only those of the run in flight.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from tui_agent.events import ErrorInfo, LogStream

REASON_LIMIT = 160


class _Message(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class ReadyMessage(_Message):
    """The kernel has started (its first line)."""

    type: Literal["ready"]
    pid: int
    python: str


class _RunMessage(_Message):
    run: str
    """The id of the request the message belongs to."""


class LogsMessage(_RunMessage):
    """Lines a run printed since the last message."""

    type: Literal["logs"]
    lines: list[tuple[LogStream, str]] = Field(default_factory=list)
    dropped: int = Field(default=0, ge=0)


class CallMessage(_RunMessage):
    """A tool call the running code makes."""

    type: Literal["call"]
    id: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ResultMessage(_RunMessage):
    """The end of a run."""

    type: Literal["result"]
    success: bool
    result: Any = None
    context: Any = None
    error: ErrorInfo | None = None
    non_serializable: list[str] = Field(default_factory=list)
    lines: list[tuple[LogStream, str]] = Field(default_factory=list)
    dropped: int = Field(default=0, ge=0)


Message = ReadyMessage | LogsMessage | CallMessage | ResultMessage
_MESSAGE: TypeAdapter[Message] = TypeAdapter(Annotated[Message, Field(discriminator="type")])


def read_message(line: bytes) -> Message | str:
    """The message on `line`, or why it is not one (one printable line).

    Nesting is bounded by the parser (about 200 levels), numbers must fit (no 5,000-digit
    integers) and text must be valid Unicode; NaN and Infinity are values a result may hold,
    never counts.
    """
    try:
        return _MESSAGE.validate_json(line)
    except ValidationError as exc:
        return _reason(exc)


def _reason(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    if error["type"] == "json_invalid":
        text = f"not JSON ({error['msg'].removeprefix('Invalid JSON: ')})"
    else:
        where = ".".join(str(part) for part in error["loc"])
        text = f"{where}: {error['msg']}" if where else error["msg"]
    shown = repr(text)[1:-1]  # the line comes from the sandbox: no control characters out
    return shown if len(shown) <= REASON_LIMIT else shown[: REASON_LIMIT - 3] + "..."
