"""The refine side of the session screen: refine with the last feedback, review, decide.

`r` refines the session with its last feedback in a worker (its events stream into the pane
through a SessionRecorder, as any other event), and the candidate it ends with is reviewed in
the DiffScreen and accepted or rejected (`d` reopens it); the decision is recorded, and an
accepted version re-run, in a worker too. `r` says what it will run (the model, the sandbox
or Chromium) and asks first when that feedback was already acted on. An imported session's
settings are checked as if typed (its network off) and what it would run is shown in a dialog
to approve before refining or re-running it.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, cast

from textual.screen import Screen
from textual.worker import Worker

from tui_agent.agents.refine import (
    MAX_ATTEMPTS,
    Allowances,
    RefinementError,
    RunPlan,
    RunSettings,
    configured_model,
    decide,
    is_recipe_session,
    named_feedback,
    rerun_plan,
    run_settings,
    start_refinement,
)
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import Settings
from tui_agent.events import (
    Artifact,
    Error,
    Event,
    FeedbackSubmitted,
    Log,
    RefinementProgress,
    VersionDecided,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.session_questions import candidate_awaiting_decision
from tui_agent.tui.messages import RefinementFinished, VersionDecisionRecorded
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.diff import Decision, DiffScreen, outcome_note
from tui_agent.tui.screens.imported_run import ImportedRunModal

if TYPE_CHECKING:
    from tui_agent.store import Store
    from tui_agent.tui.app import TuiAgentApp

REFINE_WORKERS = "refinement"


def latest_feedback(state: SessionState) -> list[FieldFeedback]:
    """The feedback of the session's last FeedbackSubmitted (what `r` refines with)."""
    submitted = [e for e in state.timeline if isinstance(e, FeedbackSubmitted)]
    return list(submitted[-1].feedback) if submitted else []


def feedback_applied(state: SessionState) -> str | None:
    """How the session's last feedback was already acted on (None: not yet)."""
    timeline = state.timeline
    last = max((i for i, e in enumerate(timeline) if isinstance(e, FeedbackSubmitted)), default=-1)
    after = timeline[last + 1 :] if last >= 0 else []
    decided = [e for e in after if isinstance(e, VersionDecided)]
    if decided:
        verb = "accepted" if decided[-1].accepted else "rejected"
        return f"{decided[-1].name} v{decided[-1].version} came of it and was {verb}"
    candidates = [e for e in after if isinstance(e, Artifact) and e.candidate]
    if candidates:
        return f"{candidates[-1].name} v{candidates[-1].version} came of it and awaits review (d)"
    if any(isinstance(e, RefinementProgress) for e in after):
        return "a refinement already ran with it"
    return None


def refine_plan(state: SessionState, feedback: list[FieldFeedback], settings: Settings) -> str:
    """What `r` will run, in one sentence: the model, the sandbox or Chromium."""
    fields = named_feedback(feedback) or "the fields of the feedback"
    model = settings.model
    if is_recipe_session(state):
        url = state.test_context.get("url") or "the session's page"
        asks = f"; the model {model} proposes selectors" if model else ""
        return f"Refine {fields}: each corrected selector is tried in Chromium on {url}{asks}."
    if not model:
        return f"Refine {fields}: this needs a model (set TUI_AGENT_MODEL or model in config)."
    return (
        f"Refine {fields} with {model}: up to {MAX_ATTEMPTS} attempts, each re-runs the code "
        f"in the {settings.sandbox} sandbox."
    )


class RefineFlow(Screen[None]):
    """The refine actions of SessionScreen, its base: they use its state, its pending
    feedback and the recorder that appends to the session (declared here, defined there)."""

    store: Store | None
    state: SessionState
    _pending: list[FieldFeedback]

    @property
    @abstractmethod
    def session_id(self) -> str: ...

    @property
    @abstractmethod
    def recordable(self) -> bool: ...

    @abstractmethod
    async def recorder(self) -> SessionRecorder: ...

    @abstractmethod
    async def action_submit_feedback(self) -> None: ...

    @abstractmethod
    async def _submit(self, recorder: SessionRecorder) -> bool: ...

    @property
    def settings(self) -> Settings:
        """The app's settings (model, api base, sandbox) that refinement runs with."""
        app = cast("TuiAgentApp", self.app)
        return app.settings

    @property
    def refining(self) -> bool:
        """Whether a refinement or a decision is running for this session now."""
        return any(w.group == REFINE_WORKERS and not w.is_finished for w in self.workers)

    async def action_refine(self) -> None:
        """Submit any pending feedback, then refine with the last feedback in a worker; when
        that feedback was already acted on, ask first."""
        if not self.recordable:  # a live agent still runs: the feedback is kept for later
            await self.action_submit_feedback()
            self.notify("Refine (ctrl+r) once the agent has finished.", severity="warning")
            return
        applied = None if self._pending else feedback_applied(self.state)
        if applied is None:
            self._start_refinement()
            return
        feedback = latest_feedback(self.state)
        question = (
            f"{refine_plan(self.state, feedback, self.settings)}\n\n"
            f"This feedback was already applied: {applied}. Run it again?"
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_refinement()

        modal = ConfirmModal("Refine again?", question, confirm_label="Refine again")
        self.app.push_screen(modal, answered)

    def _start_refinement(self) -> None:
        self.run_worker(
            self._refine(),
            name=f"refine {self.session_id}",
            group=REFINE_WORKERS,
            exclusive=True,
            exit_on_error=False,
        )
        self.refresh_bindings()

    async def _refine(self) -> None:
        recorder = await self.recorder()
        if self._pending and not await self._submit(recorder):
            return
        feedback = latest_feedback(recorder.state)
        llm, problem = configured_model(self.settings)
        try:
            run = await self._run_settings(recorder.state)
            refinement = start_refinement(
                recorder.state, feedback, settings=self.settings, llm=llm, run=run
            )
        except RefinementError as error:
            why = f"{error} ({problem})" if problem else str(error)
            self.notify(why, severity="error", timeout=10, markup=False)
            return
        if run.imported and not await self._approved(
            refinement.plan(recorder.state, self.settings)
        ):
            return
        plan = refine_plan(recorder.state, feedback, self.settings)
        self.notify(f"{plan} The attempts follow here.", markup=False)
        finished = await self._record(recorder, refinement.run(), "refinement")
        outcome = refinement.outcome
        if not finished or outcome is None:
            return
        candidate: Artifact | None = None
        if outcome.candidate is not None:  # as recorded (stamped), for the diff
            candidate = recorder.state.artifact(outcome.candidate.name, outcome.candidate.version)
        message = outcome_note(recorder.state, candidate) if candidate else outcome.error or ""
        self.post_message(RefinementFinished(self.session_id, candidate, message))
        if candidate is not None:
            self.review(candidate, recorder.state)
        else:
            self.notify(message or "No attempt improved the fields.", severity="warning")

    async def _run_settings(self, state: SessionState) -> RunSettings:
        """The session's page and network checked as typed (an imported session's with the
        network off); a RefinementError names a refused setting."""
        imported_from = (
            None if self.store is None else await self.store.imported_from(state.session_id)
        )
        allowed = Allowances(file_urls=self.settings.allow_file_urls)
        return run_settings(state, imported_from=imported_from, allowed=allowed)

    async def _approved(self, plan: RunPlan) -> bool:
        """Whether the user approves what an imported session's run would run (a dialog)."""
        if await self.app.push_screen_wait(ImportedRunModal(plan)):
            return True
        self.notify("Nothing ran: the imported session's code was not approved.", markup=False)
        return False

    async def _record(
        self,
        recorder: SessionRecorder,
        events: AsyncGenerator[Event, None],
        what: str,
    ) -> bool:
        """Record every event of `events`; False when it stopped early (recorded as such).

        A cancellation is recorded before `events` is closed: closing may take a while (a
        sandbox or a browser to stop) and the app may be gone by then.
        """
        try:
            async for event in events:
                await recorder.emit(event)
        except asyncio.CancelledError:
            stopped = Log(level="warning", message=f"The {what} was cancelled.")
            await asyncio.shield(recorder.emit(stopped))
            raise
        except RefinementError as error:  # nothing to do: said once, not recorded
            self.notify(str(error), severity="error", timeout=10, markup=False)
            return False
        except Exception as exc:  # a fault in the agent: recorded and shown, never lost
            message = str(exc) or type(exc).__name__
            await recorder.emit(Error(message=message, kind=type(exc).__name__))
            self.notify(f"The {what} stopped: {message}", severity="error", markup=False)
            return False
        finally:
            await events.aclose()
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == REFINE_WORKERS:
            self.refresh_bindings()

    def action_review(self) -> None:
        """Show the newest candidate still waiting for a decision."""
        waiting = candidate_awaiting_decision(self.state)
        if waiting is not None:
            self.review(waiting)

    def review(self, candidate: Artifact, state: SessionState | None = None) -> None:
        """Push the DiffScreen of `candidate` (of `state`, by default this screen's); the
        answer is recorded by `decide`."""
        state = state or self.state
        screen = DiffScreen(
            state.artifact(candidate.name), candidate, outcome_note(state, candidate)
        )

        def decided(decision: Decision | None) -> None:
            if decision is None:
                self.notify("The candidate waits for you: d reviews it again.")
                return
            self.run_worker(
                self.decide(candidate, decision),
                name=f"decision on {self.session_id}",
                group=REFINE_WORKERS,
                exclusive=True,
                exit_on_error=False,
            )

        self.app.push_screen(screen, decided)

    async def decide(self, candidate: Artifact, decision: Decision) -> None:
        """Record the decision on `candidate` (with its reason); on accept the re-run
        refreshes the table (an imported session's after the user approved what it runs)."""
        recorder = await self.recorder()
        name, version, accepted = candidate.name, candidate.version, decision.accepted
        run = None
        if accepted:
            try:
                run = await self._run_settings(recorder.state)
                plan = rerun_plan(recorder.state, name, version, self.settings, run)
            except RefinementError as error:
                self.notify(str(error), severity="error", timeout=10, markup=False)
                return
            if plan is not None and not await self._approved(plan):
                return
        events = decide(
            recorder.state,
            name,
            version,
            accepted,
            settings=self.settings,
            reason=decision.reason,
            run=run,
        )
        finished = await self._record(recorder, events, "re-run")
        decided = next(
            (
                e
                for e in reversed(recorder.state.timeline)
                if isinstance(e, VersionDecided) and (e.name, e.version) == (name, version)
            ),
            None,
        )
        if decided is not None:
            verb = "Accepted" if accepted else "Rejected"
            rerun = "" if finished or not accepted else " (the re-run stopped)"
            self.notify(f"{verb} {name} v{version}{rerun}.", markup=False)
            self.post_message(VersionDecisionRecorded(decided))
