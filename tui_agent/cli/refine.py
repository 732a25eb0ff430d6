"""`tui-agent refine SESSION --field F --issue I ...`: fix a field of a recorded session.

The feedback is recorded on the session, the refinement's attempts are printed as they run
(headless, or as JSON lines), and the candidate version is accepted or rejected: with
--accept / --reject (--reason says why it was rejected), by answering the prompt in a
terminal, or later with `tui-agent refine SESSION --accept`. Bad input (an unknown session
or field, a session without items, a malformed --example) is one line on stderr, exit code
2, and nothing is recorded.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.syntax import Syntax

from tui_agent.agents.requests import RefineRequest
from tui_agent.cli.common import UsageError, add_output_options, open_store, run, say, say_json
from tui_agent.cli.imported import add_trust_options, allowances, approve
from tui_agent.cli.request_options import add_request_arguments, for_the_shell, request_from_args
from tui_agent.config import Settings
from tui_agent.events import (
    Artifact,
    Event,
    FeedbackSubmitted,
    ItemsExtracted,
    dump_event,
)
from tui_agent.printer import EventPrinter, TerminalConsole
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.session_questions import candidate_awaiting_decision
from tui_agent.store import StoreError

if TYPE_CHECKING:
    from tui_agent.agents.refine import RunSettings

USAGE_EXIT = 2


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    refine = commands.add_parser(
        "refine",
        parents=[common],
        help="fix a field of a recorded session from feedback, then accept or reject the result",
    )
    add_request_arguments(refine, RefineRequest, require=False)
    add_trust_options(refine)
    decision = refine.add_mutually_exclusive_group()
    decision.add_argument(
        "--accept",
        dest="decision",
        action="store_const",
        const=True,
        help="accept the candidate (alone: the one waiting for a decision)",
    )
    decision.add_argument(
        "--reject",
        dest="decision",
        action="store_const",
        const=False,
        help="reject the candidate (alone: the one waiting for a decision)",
    )
    refine.add_argument(
        "--reason",
        metavar="TEXT",
        help="with --reject: why the candidate was rejected (recorded with the decision)",
    )
    add_output_options(refine)
    # The TUI has no refinement entry yet: print the attempts unless --json is asked for.
    refine.set_defaults(handler=cmd_refine, decision=None, output="headless")


def refine_request(args: argparse.Namespace) -> RefineRequest | None:
    """The refinement the options describe; None when only a decision is asked for."""
    if args.field is None:
        if args.decision is None:
            raise UsageError("give --field F --issue I (or --accept / --reject alone to decide)")
        if args.issue or args.selector or args.notes or args.examples or args.looks_like:
            raise UsageError(
                "--issue, --selector, --notes, --looks-like and --example need --field"
            )
        return None
    with for_the_shell(RefineRequest):
        return request_from_args(RefineRequest, args)


def decision_reason(args: argparse.Namespace) -> str:
    """The --reason on one line ("" when none was given); only --reject takes one."""
    if args.reason is None:
        return ""
    if args.decision is not False:
        raise UsageError("--reason goes with --reject: it says why the candidate was rejected")
    return " ".join(args.reason.split())


def check_field(state: SessionState, name: str) -> None:
    """A UsageError unless the session has items and `name` is one of their fields."""
    if not state.items or state.analysis is None:
        raise UsageError(f"session {state.session_id} has no items to give feedback on")
    known = [f.name for f in state.analysis.fields]
    if name not in known:
        listed = ", ".join(known) if known else "none"
        raise UsageError(f"session {state.session_id} has no field {name!r} (fields: {listed})")


def cmd_refine(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.refine import RefinementError

    try:
        request = refine_request(args)
        reason = decision_reason(args)
    except UsageError as exc:
        return _usage_error(exc)
    given = ("api_base", "sandbox", "context_tokens", "temperature", "max_tokens", "top_p")
    overrides = {name: getattr(args, name, None) for name in given}
    settings = settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    try:
        return run(_refine(args, settings, request, reason))
    except (UsageError, RefinementError) as exc:
        return _usage_error(exc)


def _usage_error(exc: Exception) -> int:
    say(f"tui-agent: {exc}", err=True)
    return USAGE_EXIT


async def _refine(
    args: argparse.Namespace, settings: Settings, request: RefineRequest | None, reason: str
) -> int:
    from tui_agent.agents.refine import (
        RefinementError,
        configured_model,
        rerun_plan,
        run_settings,
        start_refinement,
    )

    json_output = args.output == "json"
    console = TerminalConsole(stderr=json_output)
    async with await open_store(settings) as store:
        try:
            session_id = await store.resolve(args.session)
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        imported_from = await store.imported_from(session_id)
        recorder = await SessionRecorder.resume(store, session_id)
        if request is None:
            candidate = candidate_awaiting_decision(recorder.state)
            if candidate is None:
                raise UsageError(f"session {session_id} has no candidate waiting for a decision")
            run_with = None
            if args.decision:
                run_with = run_settings(
                    recorder.state, imported_from=imported_from, allowed=allowances(args, settings)
                )
                plan = rerun_plan(
                    recorder.state, candidate.name, candidate.version, settings, run_with
                )
                if plan is not None:
                    approve(console, plan, args.trust)
            recorder.listeners.append(_listener(json_output))
            return await _decide(recorder, candidate, args.decision, settings, reason, run_with)
        feedback = request.feedback()
        check_field(recorder.state, feedback.field)
        llm, llm_error = configured_model(settings)
        limits = {} if request.max_attempts is None else {"max_attempts": request.max_attempts}
        run_with = run_settings(
            recorder.state, imported_from=imported_from, allowed=allowances(args, settings)
        )
        try:
            refinement = start_refinement(
                recorder.state, [feedback], settings=settings, llm=llm, run=run_with, **limits
            )
        except RefinementError as exc:
            raise UsageError(f"{exc} ({llm_error})" if llm_error else str(exc)) from None
        if run_with.imported:
            approve(console, refinement.plan(recorder.state, settings), args.trust)
        recorder.listeners.append(_listener(json_output))
        await recorder.emit(FeedbackSubmitted(feedback=[feedback]))
        async for event in refinement.run():
            await recorder.emit(event)
        outcome = refinement.outcome
        assert outcome is not None
        if outcome.candidate is None:
            why = f": {outcome.error}" if outcome.error else ""
            console.print(
                f"no attempt improved {feedback.field}{why}", style="bold red", soft_wrap=True
            )
            return 1
        candidate = recorder.state.artifact(outcome.candidate.name, outcome.candidate.version)
        assert candidate is not None
        _show_diff(console, recorder.state, candidate)
        decision = args.decision
        if decision is None and sys.stdin.isatty():
            decision = _ask(console, candidate)
        if decision is None:
            console.print(
                f"version {candidate.version} of the {candidate.name} waits for a decision: "
                f"tui-agent refine {session_id} --accept (or --reject)",
                soft_wrap=True,
            )
            return 0
        return await _decide(recorder, candidate, decision, settings, reason, run_with)


def _listener(json_output: bool) -> Any:
    if not json_output:
        return EventPrinter()

    def print_json(event: Event, _state: SessionState) -> None:
        say_json(dump_event(event))

    return print_json


def _show_diff(console: Console, state: SessionState, candidate: Artifact) -> None:
    """What the candidate changes in the version in use, as a unified diff."""
    current = state.artifact(candidate.name)
    if current is None:
        return
    diff = "\n".join(
        difflib.unified_diff(
            current.content.splitlines(),
            candidate.content.splitlines(),
            f"{candidate.name} v{current.version}",
            f"{candidate.name} v{candidate.version}",
            lineterm="",
        )
    )
    if diff:
        console.print(Syntax(diff, "diff", theme="ansi_dark"))


def _ask(console: Console, candidate: Artifact) -> bool:
    answer = console.input(f"Accept version {candidate.version}? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


async def _decide(
    recorder: SessionRecorder,
    candidate: Artifact,
    accepted: bool,
    settings: Settings,
    reason: str,
    run_with: RunSettings | None,
) -> int:
    """Record the decision with its reason (and on accept the re-run, with `run_with`); 1 when
    an accepted re-run failed."""
    from tui_agent.agents.refine import decide

    refreshed = False
    name, version = candidate.name, candidate.version
    async for event in decide(
        recorder.state, name, version, accepted, settings=settings, reason=reason, run=run_with
    ):
        await recorder.emit(event)
        refreshed = refreshed or isinstance(event, ItemsExtracted)
    return 1 if accepted and not refreshed else 0
