"""Refining a recipe from field feedback: patch a field's binding, verify it in Chromium, re-run.

A feedback item with a correct selector patches the field's binding (DETAILS_FIELDS or
ITEM_FIELDS, wherever the field is read; a new field goes to DETAILS_FIELDS) with no model
call: ``a.more@href`` reads an attribute, and so does a binding that read one before. With only
notes or examples, the model proposes selectors as JSON from a compact outline of the first
item's details. Every selector is verified in the browser before it is used: on the first
item's details (or on the item itself, for an item field) it must match and give a non-empty
value. The patched recipe then runs on the session's url with its max_items, and each feedback
item is checked (`analysis.resolution`); an attempt that lowers another field's coverage is
refused. Nothing touches the session's items until the user accepts the candidate
(`rerun_recipe`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from tui_agent.agents.browsing import browser_for
from tui_agent.agents.refine.base import (
    Refinement,
    RefinementError,
    RefinementOutcome,
    outcome_message,
    progress_message,
)
from tui_agent.agents.refine.run_settings import RunPlan, recipe_plan
from tui_agent.agents.refine.selectors import (
    current_binding,
    describe,
    field_group,
    parse_candidates,
    patched,
    proposal_messages,
    user_candidates,
)
from tui_agent.analysis import analyze_output
from tui_agent.analysis.resolution import FieldCheck, check_feedback, coverage, regressions
from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.errors import UserError
from tui_agent.events import (
    Artifact,
    Event,
    ItemsExtracted,
    Log,
    OutputAnalyzed,
    Thought,
    ThoughtDelta,
    ToolCall,
)
from tui_agent.session import SessionState
from tui_agent.web.browser import Browser, BrowserError, find_chromium
from tui_agent.web.phase import PhaseRun
from tui_agent.web.recipe import (
    FieldSelector,
    Group,
    RecipeError,
    RecipeFile,
    RunOutcome,
    View,
    ViewError,
    ViewOutcome,
    first_line,
    open_view,
    parse_recipe,
    recipe_json,
    run_in,
)
from tui_agent.web.tool_events import tool_result

if TYPE_CHECKING:
    from tui_agent.config import Settings


def current_recipe(state: SessionState) -> dict[str, Any]:
    """The recipe in use: the current "recipe" artifact, else the test context's recipe."""
    artifact = state.artifact("recipe")
    if artifact is not None:
        document = artifact_recipe(artifact)
    else:
        document = state.test_context.get("recipe")
    if not isinstance(document, dict):
        raise RefinementError("the session has no recipe to refine")
    return document


def artifact_recipe(artifact: Artifact) -> Any:
    """The JSON of a recipe version; a RefinementError (one line) when it cannot be read."""
    try:
        return recipe_json(artifact.content, f"recipe version {artifact.version}")
    except RecipeError as exc:
        raise RefinementError(str(exc)) from None


@dataclass
class _Best:
    """The version kept so far: its document, its run's items and analysis, its attempt."""

    document: dict[str, Any]
    items: list[Any] = field(default_factory=list)
    analysis: OutputAnalysis | None = None
    attempt: int = 0


class RecipeRefinement(Refinement):
    """Refines a recipe session's field bindings; iterate `run()`, then read `outcome`."""

    name = "recipe"
    format = "json"

    def _prepare(self, state: SessionState, settings: Settings) -> str:
        self.document = current_recipe(state)
        try:
            parse_recipe(self.document, "the session's recipe")
        except RecipeError as exc:
            raise RefinementError(str(exc).splitlines()[0]) from None
        url = self.run_settings.url
        if not url:
            raise RefinementError("the session has no test url to run the recipe on")
        self.url = url
        lacking = [f.field for f in self.feedback if not f.correct_selector]
        if lacking and self.llm is None:
            raise RefinementError(
                f"no selector for {', '.join(lacking)} and no model to propose one: "
                "give the correct selector (--selector) or configure a model (--model)"
            )
        try:
            self.browser = browser_for(settings, url, settings.chromium or find_chromium())
        except BrowserError as exc:
            raise RefinementError(str(exc)) from None
        self.max_items = state.params.get("max_items")
        self.before = state.analysis
        self.before_items = list(state.items)
        self._step = max(state.steps, default=0)
        self._token = uuid.uuid4().hex[:6]
        self._tried: dict[str, list[tuple[FieldSelector, str]]] = {
            f.field: [] for f in self.feedback
        }
        """Per field, the selectors refused so far and why (told to the model)."""
        self._asked_user: set[str] = set()
        return _dump(self.document)

    def plan(self, state: SessionState, settings: Settings) -> RunPlan:
        """The recipe in use, run in Chromium with each corrected selector."""
        fields = ", ".join(f.field for f in self.feedback)
        return recipe_plan(
            state,
            self.run_settings,
            action=f"refine {fields}: this recipe runs with each corrected selector",
            recipe=_dump(self.document),
            max_items=self.max_items,
        )

    async def run(self) -> AsyncGenerator[Event, None]:
        """The refinement's events; sets `outcome` at the end."""
        if self.original is not None:
            yield self.original
        best = _Best(self.document)
        remaining = list(self.feedback)
        fixed: list[str] = []
        unverified: list[str] = []
        attempt = 0
        error: str | None = None
        browser = self.browser
        try:
            await browser.start()
            while remaining and attempt < self.max_attempts:
                attempt += 1
                yield self.attempt_started(attempt, fixed, remaining)
                proposals: dict[str, tuple[Group, FieldSelector]] = {}
                async for event in self._propose(browser, best.document, remaining, proposals):
                    yield event
                resolved: list[FieldCheck] = []
                if proposals:
                    run = self._attempt(browser, attempt, best, remaining, proposals, resolved)
                    async for event in run:
                        yield event
                fixed += [c.field for c in resolved if c.verified]
                unverified += [c.field for c in resolved if not c.verified]
                done = {c.field for c in resolved}
                remaining = [f for f in remaining if f.field not in done]
                message = progress_message(fixed, remaining, unverified)
                yield self.progress(attempt, message, fixed, remaining, unverified)
                if self.llm is None:
                    break  # the user's selectors were all there was to try
        except UserError as exc:
            error = str(exc).splitlines()[0]
            yield Log(level="error", message=f"refinement stopped: {error}")
        finally:
            await browser.close()
        candidate = None
        improved: list[str] = []
        if best.analysis is not None:
            checks = [self._check(f, best.analysis, best.items) for f in self.feedback]
            improved = [c.field for c in checks if c.verdict == "improved"]
            candidate = self.candidate(
                _dump(best.document), best.attempt, checks, self.before_items, best.items
            )
            yield candidate
        message = outcome_message(fixed, remaining, unverified, improved)
        message += f" ({error})" if error else ""
        yield self.progress(attempt, message, fixed, remaining, unverified)
        self.outcome = RefinementOutcome(
            name=self.name,
            candidate=candidate,
            fixed=fixed,
            remaining=[f.field for f in remaining],
            unverified=unverified,
            attempts=attempt,
            items=best.items,
            analysis=best.analysis,
            error=error,
        )

    def _check(
        self, feedback: FieldFeedback, analysis: OutputAnalysis, items: list[Any]
    ) -> FieldCheck:
        return check_feedback(
            feedback,
            self.before,
            analysis,
            items,
            target_coverage=self.target_coverage,
            before_items=self.before_items,
        )

    def _refuse(self, name: str, spec: FieldSelector, why: str) -> None:
        self._tried.setdefault(name, []).append((spec, why))

    # -- proposing and verifying selectors ----------------------------------------------------

    async def _propose(
        self,
        browser: Browser,
        document: dict[str, Any],
        remaining: list[FieldFeedback],
        proposals: dict[str, tuple[Group, FieldSelector]],
    ) -> AsyncIterator[Event]:
        """A verified selector per field where one is found: the user's first, else the model's."""
        recipe = parse_recipe(document, "the recipe")
        views: dict[Group, View] = {}
        try:
            for feedback in remaining:
                name = feedback.field
                group = field_group(document, name)
                if group not in views:
                    opened = PhaseRun(open_view(browser, document, self.url, group), ViewOutcome)
                    async for event in opened:
                        yield event
                    if opened.outcome.view is None:
                        raise ViewError(str(opened.outcome.failure))
                    views[group] = opened.outcome.view
                view = views[group]
                current = current_binding(recipe, group, name)
                if feedback.correct_selector and name not in self._asked_user:
                    self._asked_user.add(name)
                    candidates = user_candidates(feedback, current)
                    async for event in self._verify(view, name, group, candidates, proposals):
                        yield event
                if name not in proposals and self.llm is not None:
                    found: list[FieldSelector] = []
                    async for event in self._ask_model(feedback, group, current, view, found):
                        yield event
                    async for event in self._verify(view, name, group, found, proposals):
                        yield event
        finally:
            for view in views.values():
                await view.close()

    async def _ask_model(
        self,
        feedback: FieldFeedback,
        group: Group,
        current: FieldSelector | None,
        view: View,
        found: list[FieldSelector],
    ) -> AsyncIterator[Event]:
        """The model's candidates for one field, streamed on a new step, into `found`."""
        assert self.llm is not None
        self._step += 1
        step = self._step
        tried = self._tried.get(feedback.field, [])
        messages = proposal_messages(
            feedback,
            group=group,
            current=current,
            analysis=self.before,
            url=self.url,
            where=view.where,
            outline=await view.outline(),
            tried=[f"{describe(spec)}: {why}" for spec, why in tried],
        )
        stream = self.llm.stream(messages, want_json=True, purpose="refine recipe", step=step)
        async for delta in stream:
            yield ThoughtDelta(step=step, text=delta)
        reply = stream.reply
        yield Thought(step=step, text=reply.text)
        yield reply.call
        refused = {spec for spec, _ in tried}
        found.extend(spec for spec in parse_candidates(reply.text) if spec not in refused)
        if not found:
            yield Log(
                level="warning", message=f"{feedback.field}: the model proposed no new selector"
            )

    async def _verify(
        self,
        view: View,
        name: str,
        group: Group,
        candidates: list[FieldSelector],
        proposals: dict[str, tuple[Group, FieldSelector]],
    ) -> AsyncIterator[Event]:
        """Try each candidate in the page; the first that reads a value becomes the proposal."""
        for spec in candidates:
            call = ToolCall(
                call_id=f"verify-{uuid.uuid4().hex[:8]}",
                name="verify_selector",
                arguments={
                    "field": name,
                    "group": group,
                    "selector": spec.selector,
                    "attribute": spec.attribute,
                },
            )
            yield call
            began = time.monotonic()
            count, value, problem = 0, None, ""
            try:
                count, value = await view.read(spec)
            except PlaywrightError as exc:
                problem = f"not a usable selector ({first_line(exc)})"
            if value is not None:
                output = f"{count} {'match' if count == 1 else 'matches'} in {view.where}: "
                output += json.dumps(value[:80], ensure_ascii=False)
            elif not problem:
                reads = "an empty value" if spec.attribute is None else f"no {spec.attribute}"
                problem = (
                    f"matches {count} elements but reads {reads}" if count else "matches nothing"
                )
                problem += f" in {view.where}"
            yield tool_result(
                call,
                began,
                output if value is not None else problem,
                {"count": count, "value": value},
                ok=value is not None,
            )
            if value is not None:
                proposals[name] = (group, spec)
                return
            yield Log(level="warning", message=f"{name}: {describe(spec)} refused: {problem}")
            self._refuse(name, spec, problem)

    # -- running an attempt ----------------------------------------------------------------

    async def _attempt(
        self,
        browser: Browser,
        attempt: int,
        best: _Best,
        remaining: list[FieldFeedback],
        proposals: dict[str, tuple[Group, FieldSelector]],
        resolved: list[FieldCheck],
    ) -> AsyncIterator[Event]:
        """Patch the proposals in, run, check; keep the version in `best` when it improved a
        field without lowering any coverage, and put the checks it resolved in `resolved`."""
        document = best.document
        for name, (group, spec) in proposals.items():
            document = patched(document, name, group, spec)
        recipe = parse_recipe(document, "the patched recipe")
        label = f"refine-{self._token}-a{attempt}"
        ran = PhaseRun(
            run_in(browser, recipe, self.url, max_items=self.max_items, label=label), RunOutcome
        )
        async for event in ran:
            yield event
        result = ran.outcome
        if not result.items:
            error = result.failure.message if result.failure else "none saved"
            why = f"the recipe gave no items ({error})"
            yield Log(level="warning", message=f"attempt {attempt} refused: {why}")
            for name, (_, spec) in proposals.items():
                self._refuse(name, spec, why)
            return
        analysis = analyze_output(result.items)
        checks = [self._check(f, analysis, result.items) for f in remaining]
        for check in checks:
            yield Log(level="info", message=f"attempt {attempt}: {check.detail}")
        baseline = best.analysis or self.before
        lowered = regressions(baseline, analysis)
        if lowered:
            why = f"it lowered the coverage of {', '.join(lowered)}"
            yield Log(level="warning", message=f"attempt {attempt} refused: {why}")
            for name, (_, spec) in proposals.items():
                self._refuse(name, spec, why)
            return
        gained = [
            c
            for c in checks
            if c.resolved
            or coverage(analysis, c.field) > coverage(baseline, c.field)
            or (best.analysis is None and c.verdict == "improved")
        ]
        if not gained:
            yield Log(level="info", message=f"attempt {attempt} not kept: it improved no field")
        else:
            best.document, best.items, best.analysis, best.attempt = (
                document,
                result.items,
                analysis,
                attempt,
            )
            resolved.extend(c for c in checks if c.resolved)
        for check in checks:
            if not check.resolved and check.field in proposals:
                self._refuse(check.field, proposals[check.field][1], check.detail)


async def rerun_recipe(
    recipe: RecipeFile, url: str, *, settings: Settings, max_items: int | None
) -> AsyncIterator[Event]:
    """Run an accepted recipe version on the session's url (checked): its ToolCall /
    ToolResult, then ItemsExtracted(replace=True) with every item and OutputAnalyzed. A run
    that fails keeps the session's items and says why in an error Log."""
    browser = browser_for(settings, url, settings.chromium or find_chromium())
    error: str | None = None
    items: list[dict[str, Any]] = []
    try:
        await browser.start()
        label = f"rerun-{uuid.uuid4().hex[:6]}"
        ran = PhaseRun(run_in(browser, recipe, url, max_items=max_items, label=label), RunOutcome)
        async for event in ran:
            yield event
        items = ran.outcome.items
        error = ran.outcome.failure.message if ran.outcome.failure else None
    except BrowserError as exc:
        error = str(exc)
    finally:
        await browser.close()
    if error is not None:
        yield Log(level="error", message=f"the re-run failed, the items stay: {error}")
        return
    yield ItemsExtracted(items=items, replace=True)
    yield OutputAnalyzed(analysis=analyze_output(items))


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)
