"""Messages the app's screens post: what happened, for the app and for tests to observe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from textual.message import Message

from tui_agent.events import Artifact, Event, FeedbackSubmitted, VersionDecided

SessionMode = Literal["live", "stored", "replay"]


if TYPE_CHECKING:
    from tui_agent.agents.launch import Launch
    from tui_agent.batch.inputs import BatchStart


class EventsReceived(Message):
    """The events a session's recorder recorded within one frame, in order (display copies:
    the screen folds them into the state it shows)."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events


class SessionRequested(Message):
    """The user asked to open (`stored`) or replay a session from the list."""

    def __init__(self, session_id: str, mode: Literal["stored", "replay"]) -> None:
        super().__init__()
        self.session_id = session_id
        self.mode = mode


class SessionPrepared(Message):
    """The new-session form prepared a session (every check passed): for the app to record
    and show."""

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.launch = launch


class BatchPrepared(Message):
    """The new-session form prepared a batch (its files read, its items checked): for the app
    to drive and show."""

    def __init__(self, start: BatchStart) -> None:
        super().__init__()
        self.start = start


class SessionOpened(Message):
    """A session screen was shown for `session_id`."""

    def __init__(self, session_id: str, mode: SessionMode) -> None:
        super().__init__()
        self.session_id = session_id
        self.mode = mode


class LiveSessionCancelled(Message):
    """The user cancelled the running agent of `session_id`."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class FeedbackRecorded(Message):
    """Collected field feedback was stored as one FeedbackSubmitted event."""

    def __init__(self, event: FeedbackSubmitted) -> None:
        super().__init__()
        self.event = event


class RefinementFinished(Message):
    """A refinement of `session_id` ended: its candidate (None when no attempt improved
    anything) and its last progress message (or why it stopped)."""

    def __init__(self, session_id: str, candidate: Artifact | None, message: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.candidate = candidate
        self.message = message


class VersionDecisionRecorded(Message):
    """The user's decision on a candidate was recorded (and, on accept, the re-run ended)."""

    def __init__(self, event: VersionDecided) -> None:
        super().__init__()
        self.event = event


class SessionDeleted(Message):
    """`session_id` and all its rows were deleted from the store."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class ReplayMoved(Message):
    """The replay position, speed or play state changed."""

    def __init__(self, position: int, total: int, speed: float, playing: bool) -> None:
        super().__init__()
        self.position = position
        self.total = total
        self.speed = speed
        self.playing = playing


class ContinueRequested(Message):
    """Continue the stored session `session_id` live (fork it at step `fork_at`, when given)."""

    def __init__(self, session_id: str, fork_at: int | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.fork_at = fork_at
