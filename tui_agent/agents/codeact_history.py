"""A CodeAct conversation rebuilt from its stored events, as the model had it: the system
prompt, the task, per step the model's action and the EXECUTION_RESULT it got, the user's
messages where they came. What a continued or forked session starts from."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.agents.codeact_prompts import (
    RESULT_PREFIX,
    USER_EDITED,
    assistant_message,
    result_message,
    system_message,
    task_message,
)
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    FinalAnswer,
    Log,
    SessionStarted,
    Thought,
    UserMessage,
)
from tui_agent.llm import JSON_FORM, Action, ActionName, Message, ReplyForm
from tui_agent.sandbox.wire import ExecuteResult

NOT_RUN = RESULT_PREFIX + "not run (skipped or interrupted by the user)."


def codeact_history(
    events: Sequence[Event], network: bool, form: ReplyForm = JSON_FORM
) -> list[Message]:
    """The messages the model had after `events` (a CodeAct session's, in order), its own
    turns written in `form`."""
    history = _History(network, form)
    for event in events:
        history.add(event)
    history.flush()
    return history.messages


class _History:
    def __init__(self, network: bool, form: ReplyForm) -> None:
        self.form = form
        self.messages: list[Message] = [system_message(network, form)]
        self.thoughts: dict[int, str] = {}
        self.proposed: dict[int, CodeProposed] = {}
        self.ran: dict[int, str] = {}
        self.edited: set[int] = set()
        """Steps whose code the user edited before it ran."""
        self.pending: int | None = None
        """A step whose code was proposed and has no result yet."""

    def add(self, event: Event) -> None:
        if isinstance(event, SessionStarted):
            self.messages.append(task_message(str(event.params.get("task", ""))))
        elif isinstance(event, Thought):
            self.thoughts[event.step] = event.text
        elif isinstance(event, CodeProposed):
            if self.pending is not None and self.pending != event.step:
                self.flush()
            if event.step not in self.edited:  # the model's, or the parser's repair of it
                self.proposed[event.step] = event
            self.ran[event.step] = event.code
            self.pending = event.step
        elif isinstance(event, Log) and event.message.endswith(USER_EDITED):
            self.edited.add(self.pending or 0)
        elif isinstance(event, ExecutionFinished) and event.step in self.proposed:
            self._action(event.step)
            first = self.proposed[event.step].code
            edited = self.ran[event.step] if self.ran[event.step] != first else None
            result = ExecuteResult.from_event(event)
            message = result_message(result, self.ran[event.step], edited, form=self.form)
            self.messages.append(message)
            self.pending = None
        elif isinstance(event, FinalAnswer):
            self.flush()
            answer = Action.model_construct(
                thought=self.thoughts.get(event.step, ""),
                action="provide_answer",
                final_answer=event.text,
            )
            self.messages.append(assistant_message(self.form.render(answer)))
        elif isinstance(event, UserMessage):
            self.flush()
            text = event.text
            if event.queued:
                text = f"Message from the user, sent while you worked:\n{text}"
            self._user(text)

    def flush(self) -> None:
        """A proposed step that never got its result: told to the model as not run."""
        if self.pending is None:
            return
        self._action(self.pending)
        self.messages.append({"role": "user", "content": NOT_RUN})
        self.pending = None

    def _action(self, step: int) -> None:
        proposed = self.proposed[step]
        name: ActionName = "debug_error" if proposed.action == "debug_error" else "execute_code"
        action = Action.model_construct(
            thought=self.thoughts.get(step, ""), action=name, code=proposed.code
        )
        self.messages.append(assistant_message(self.form.render(action)))

    def _user(self, text: str) -> None:
        last = self.messages[-1]
        if last.get("role") == "user" and isinstance(last.get("content"), str):
            self.messages[-1] = {**last, "content": f"{last['content']}\n\n{text}"}
        else:
            self.messages.append({"role": "user", "content": text})
