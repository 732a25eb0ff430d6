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

import contextlib
import copy
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.agents.refinement import (
    MAX_ATTEMPTS,
    TARGET_COVERAGE,
    RefinementError,
    RefinementOutcome,
    next_version,
    original_artifact,
    outcome_message,
    progress_message,
    version_summary,
)
from tui_agent.analysis import analyze_output
from tui_agent.analysis.models import FEEDBACK_ISSUE_LABELS, FieldFeedback, OutputAnalysis
from tui_agent.analysis.resolution import FieldCheck, check_feedback, coverage, regressions
from tui_agent.events import (
    Artifact,
    Event,
    ItemsExtracted,
    Log,
    OutputAnalyzed,
    RefinementProgress,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.llm.errors import LLMError
from tui_agent.session import SessionState
from tui_agent.web.browser import Browser, BrowserError, find_chromium
from tui_agent.web.executor import BrowserGone, HardFailure, RecipeExecutor
from tui_agent.web.extract import PRELUDE
from tui_agent.web.failures import first_line
from tui_agent.web.recipe import FieldSelector, RecipeError, RecipeFile, parse_recipe

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.llm import LLM

Group = Literal["DETAILS_FIELDS", "ITEM_FIELDS"]
LOAD_TIMEOUT_MS = 30_000
MAX_CANDIDATES = 5
OUTLINE_LINES = 80
"""Elements shown to the model in the outline of the details (or the item)."""

_ATTRIBUTE_SUFFIX = re.compile(r"^(.*\S)@([A-Za-z_][\w:.-]*)$")
_NOTES_ATTRIBUTE = re.compile(
    r"\battribute\s+[\"'`]?([A-Za-z_][\w:-]*)|\b([A-Za-z_][\w:-]*)[\"'`]?\s+attribute\b",
    re.IGNORECASE,
)

# arg: {list, item, inItem, panel, selector (null: outline), attribute, limit}. The scope is
# found as EXTRACT_JS finds it: the details panel (or the page), or inside the first shown item.
VIEW_JS = f"""
(arg) => {{
  {PRELUDE}
  const items = [...(document.querySelector(arg.list)?.querySelectorAll(arg.item) ?? [])];
  let scope = arg.inItem ? (items.find(visible) || null) : document.body;
  if (scope && arg.panel) {{
    const inside = scope.matches(arg.panel) ? scope : pick(scope, arg.panel);
    scope = inside || (arg.inItem ? scope : null);
  }}
  if (!scope) return null;
  if (arg.selector !== null) {{
    const count = arg.selector === ":scope" ? 1 : scope.querySelectorAll(arg.selector).length;
    const [fields] = readFields(scope, {{value: [arg.selector, arg.attribute]}});
    return {{count, value: fields.value}};
  }}
  const lines = [];
  const name = (el) =>
    el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    [...el.classList].map((c) => "." + c).join("");
  const walk = (el, depth) => {{
    if (lines.length >= arg.limit || el.matches("script, style, template, svg")) return;
    if (!visible(el)) return;
    const own = clean([...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data)
      .join(" "));
    const attrs = ["href", "src", "datetime", "content", "title", "alt"]
      .filter((a) => el.hasAttribute(a))
      .map((a) => a + '="' + el.getAttribute(a).slice(0, 80) + '"');
    lines.push("  ".repeat(Math.min(depth, 8)) + name(el) +
      (attrs.length ? " [" + attrs.join(" ") + "]" : "") +
      (own ? ' "' + own.slice(0, 80) + '"' : ""));
    for (const child of el.children) walk(child, depth + 1);
  }};
  walk(scope, 0);
  return {{outline: lines.join("\\n"), full: lines.length < arg.limit}};
}}
"""

SYSTEM_PROMPT = """You repair one field of a web scraping recipe. The recipe reads each field \
with a CSS selector searched inside a scope (the item's details, or the list item itself); the \
value is the matched element's visible text, or one of its attributes when "attribute" is set \
(href and src give absolute URLs).

Answer with JSON only, the best candidate first, at most 3:
{"candidates": [{"selector": "CSS selector relative to the scope", "attribute": null, \
"why": "one short reason"}]}

Use the classes, ids and tags of the outline you are given; be specific enough to avoid false \
positives. Each candidate is tried in a real browser before it is used."""


def field_group(document: dict[str, Any], name: str) -> Group:
    """Where field `name` is read: DETAILS_FIELDS (also for a new field) or ITEM_FIELDS."""
    bindings = document.get("bindings", {})
    if name not in bindings.get("DETAILS_FIELDS", {}) and name in bindings.get("ITEM_FIELDS", {}):
        return "ITEM_FIELDS"
    return "DETAILS_FIELDS"


def current_binding(recipe: RecipeFile, group: Group, name: str) -> FieldSelector | None:
    """The selector field `name` is read with now (None: the recipe does not read it)."""
    return getattr(recipe.bindings, group).get(name)


def split_selector(text: str) -> FieldSelector:
    """A selector as the user writes it: `a.more@href` reads the href attribute."""
    match = _ATTRIBUTE_SUFFIX.match(text.strip())
    if match:
        return FieldSelector(selector=match.group(1), attribute=match.group(2))
    return FieldSelector(selector=text.strip())


def describe(spec: FieldSelector) -> str:
    return f'"{spec.selector}"' + (f" @{spec.attribute}" if spec.attribute else "")


def user_candidates(feedback: FieldFeedback, current: FieldSelector | None) -> list[FieldSelector]:
    """The user's selector, read as they said (`@attr`, or an attribute named in the notes);
    else first with the attribute the binding read before, then as text."""
    assert feedback.correct_selector is not None
    given = split_selector(feedback.correct_selector)
    if given.attribute is not None:
        return [given]
    noted = _NOTES_ATTRIBUTE.search(feedback.notes or "")
    if noted:
        return [FieldSelector(selector=given.selector, attribute=noted.group(1) or noted.group(2))]
    if current is not None and current.attribute is not None:
        return [FieldSelector(selector=given.selector, attribute=current.attribute), given]
    return [given]


def patched(document: dict[str, Any], name: str, group: Group, spec: FieldSelector) -> dict:
    """A copy of the recipe document whose binding of field `name` is `spec`."""
    result = copy.deepcopy(document)
    fields = result.setdefault("bindings", {}).setdefault(group, {})
    fields[name] = spec.model_dump(mode="json", exclude_none=True)
    return result


def parse_candidates(text: str) -> list[FieldSelector]:
    """The selectors a model's JSON answer proposes (fenced or not), best first, de-duplicated."""
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError:
        found = re.search(r"\{.*\}|\[.*\]", body, re.DOTALL)
        if found is None:
            return []
        try:
            data = json.loads(found.group(0))
        except json.JSONDecodeError:
            return []
    if isinstance(data, dict):
        data = data.get("candidates", [data])
    if not isinstance(data, list):
        return []
    candidates: list[FieldSelector] = []
    for entry in data:
        if isinstance(entry, str) and entry.strip():
            spec = split_selector(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("selector"), str):
            attribute = entry.get("attribute")
            if not entry["selector"].strip():
                continue
            spec = FieldSelector(
                selector=entry["selector"].strip(),
                attribute=attribute if isinstance(attribute, str) and attribute else None,
            )
        else:
            continue
        if spec not in candidates:
            candidates.append(spec)
    return candidates[:MAX_CANDIDATES]


def current_recipe(state: SessionState) -> dict[str, Any]:
    """The recipe in use: the current "recipe" artifact, else the test context's recipe."""
    artifact = state.artifact("recipe")
    if artifact is not None:
        try:
            document = json.loads(artifact.content)
        except json.JSONDecodeError as exc:
            raise RefinementError(f"recipe version {artifact.version} is not JSON: {exc}") from None
    else:
        document = state.test_context.get("recipe")
    if not isinstance(document, dict):
        raise RefinementError("the session has no recipe to refine")
    return document


def probe_document(document: dict[str, Any], group: Group) -> dict[str, Any] | None:
    """The recipe cut short so it stops (END) once the first item's details are shown, or
    at the first item itself for an item field; None when it has no FOR_EACH_ITEM_IN_LIST."""

    def cut(commands: list[Any]) -> list[Any] | None:
        for index, command in enumerate(commands):
            kind = command.get("type") if isinstance(command, dict) else None
            if kind == "FOR_EACH_ITEM_IN_LIST":
                body = command.get("body", [])
                kinds = [c.get("type") for c in body]
                until = kinds.index("EXTRACT_DETAILS") if "EXTRACT_DETAILS" in kinds else 0
                kept = body[:until] if group == "DETAILS_FIELDS" else []
                return [*commands[:index], {**command, "body": [*kept, {"type": "END"}]}]
            if kind == "REPEAT":
                inner = cut(command.get("body", []))
                if inner is not None:
                    return [*commands[:index], {**command, "body": inner}]
        return None

    recipe = document.get("recipe", {})
    commands = cut(recipe.get("commands", []))
    if commands is None:
        return None
    return {**document, "recipe": {**recipe, "commands": commands}}


@dataclass
class RunResult:
    """What one run of a recipe gave: its items, and the error that stopped it (if any)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    failed: int = 0


async def run_in(
    browser: Browser,
    recipe: RecipeFile,
    url: str,
    *,
    max_items: int | None,
    label: str,
    result: RunResult,
) -> AsyncIterator[Event]:
    """Run `recipe` on `url` in a new page: a "run_recipe" ToolCall, each command's ToolCall /
    ToolResult (call ids prefixed with `label`, so they stay unique in the session), skipped
    items as warnings, and a closing ToolResult. Items are collected in `result`, not emitted."""
    began = time.monotonic()
    yield ToolCall(call_id=label, name="run_recipe", arguments={"url": url, "max_items": max_items})
    page = await browser.page()
    executor = RecipeExecutor(page, recipe, max_items=max_items, crashed=lambda: browser.crashed)
    try:
        await page.goto(url, timeout=LOAD_TIMEOUT_MS)
        async for event in executor.run():
            if isinstance(event, ToolCall | ToolResult):
                yield event.model_copy(update={"call_id": f"{label}-{event.call_id}"})
            elif not isinstance(event, ItemsExtracted):
                yield event
    except (HardFailure, BrowserGone) as exc:
        result.error = str(exc)
    except PlaywrightError as exc:
        result.error = f"cannot load {url}: {first_line(exc)}"
    finally:
        result.items, result.failed = list(executor.items), executor.failed
        with contextlib.suppress(PlaywrightError):
            await page.context.close()
    summary = f"{len(result.items)} items, {result.failed} failed"
    yield ToolResult(
        call_id=label,
        name="run_recipe",
        output=summary if result.error is None else f"{summary}; {result.error}",
        facts={"items": len(result.items), "failed": result.failed},
        ok=result.error is None,
        duration=time.monotonic() - began,
    )


class View:
    """The first item's details (or the item) open in a page: read selectors, outline it."""

    def __init__(self, page: Page, recipe: RecipeFile, group: Group) -> None:
        bindings = recipe.bindings
        in_item = group == "ITEM_FIELDS" or bindings.CLICK_BEHAVIOR == "inline"
        self.page = page
        self.where = "the first item" if group == "ITEM_FIELDS" else "the first item's details"
        self._arg: dict[str, Any] = {
            "list": bindings.LIST,
            "item": bindings.LIST_ITEM,
            "inItem": in_item,
            "panel": bindings.DETAILS_PANEL if group == "DETAILS_FIELDS" else None,
            "selector": None,
            "attribute": None,
            "limit": OUTLINE_LINES,
        }

    async def read(self, spec: FieldSelector) -> tuple[int, str | None]:
        """How many elements `spec` matches and the value it reads (None: none)."""
        arg = {**self._arg, "selector": spec.selector, "attribute": spec.attribute}
        found = await self.page.evaluate(VIEW_JS, arg)
        if found is None:
            raise RefinementError(f"{self.where} is no longer shown")
        value = found["value"]
        return found["count"], value.strip() if isinstance(value, str) and value.strip() else None

    async def outline(self) -> str:
        """The scope's visible elements, one per line: tag#id.classes [attributes] "text"."""
        found = await self.page.evaluate(VIEW_JS, self._arg)
        if found is None:
            return "(not shown)"
        more = "" if found["full"] else f"\n… (first {OUTLINE_LINES} elements)"
        return found["outline"] + more

    async def close(self) -> None:
        with contextlib.suppress(PlaywrightError):
            await self.page.context.close()


async def open_view(
    browser: Browser, document: dict[str, Any], url: str, group: Group
) -> AsyncIterator[Event | View]:
    """Open the first item's details (or the list, for an item field) by running the recipe
    up to there: an "open_view" ToolCall / ToolResult, then the View. RefinementError (after
    the failed ToolResult) when it cannot be shown: no selector could be verified."""
    call = ToolCall(
        call_id=f"view-{uuid.uuid4().hex[:8]}",
        name="open_view",
        arguments={"url": url, "view": "item" if group == "ITEM_FIELDS" else "details"},
    )
    yield call
    began = time.monotonic()
    probe = probe_document(document, group)
    if probe is None:
        reason = "the recipe has no FOR_EACH_ITEM_IN_LIST to reach an item with"
        yield ToolResult(call_id=call.call_id, name=call.name, output=reason, ok=False)
        raise RefinementError(f"cannot verify selectors: {reason}")
    recipe = parse_recipe(probe, "the probe recipe")
    page = await browser.page()
    view = View(page, recipe, group)
    executor = RecipeExecutor(page, recipe, crashed=lambda: browser.crashed)
    warnings: list[str] = []
    reached = False
    try:
        await page.goto(url, timeout=LOAD_TIMEOUT_MS)
        async for event in executor.run():
            if isinstance(event, Log) and event.level == "warning":
                warnings.append(event.message)
            reached = reached or (isinstance(event, ToolResult) and event.name == "END")
    except (HardFailure, BrowserGone) as exc:
        warnings.append(str(exc))
    except PlaywrightError as exc:
        warnings.append(f"cannot load {url}: {first_line(exc)}")
    duration = time.monotonic() - began
    if not reached:
        await view.close()
        reason = f"cannot show {view.where}: " + (warnings[-1] if warnings else "no item")
        yield ToolResult(
            call_id=call.call_id, name=call.name, output=reason, ok=False, duration=duration
        )
        raise RefinementError(f"cannot verify selectors: {reason}")
    output = f"{view.where} shown at {page.url}"
    yield ToolResult(call_id=call.call_id, name=call.name, output=output, duration=duration)
    yield view


def proposal_messages(
    feedback: FieldFeedback,
    *,
    group: Group,
    current: FieldSelector | None,
    analysis: OutputAnalysis | None,
    url: str,
    where: str,
    outline: str,
    tried: list[str],
) -> list[dict[str, str]]:
    """The model's prompt (seed 000 section 6, scraper) for the selectors of one field."""
    binding = describe(current) if current is not None else "(not read yet)"
    lines = [
        "You are refining scraper code (a recipe's field bindings) based on user feedback.",
        "",
        f"CURRENT BINDING: {group}.{feedback.field} = {binding}",
        "",
        "OUTPUT ANALYSIS:",
    ]
    if analysis is not None:
        lines.append(f"- Total items: {analysis.item_count}")
        detected = ", ".join(f"{f.name} ({f.coverage}% populated)" for f in analysis.fields)
        lines.append(f"- Fields detected: {detected}")
        known = analysis.field(feedback.field)
        if known is not None and known.examples:
            lines.append(f"- Current values of {feedback.field}: {json.dumps(known.examples)}")
    lines += [
        "",
        "USER FEEDBACK:",
        f'- Field "{feedback.field}": {feedback.issue} ({FEEDBACK_ISSUE_LABELS[feedback.issue]})',
    ]
    if feedback.notes:
        lines.append(f"  Notes: {feedback.notes}")
    if feedback.correct_selector:
        lines.append(f"  Correct selector (did not work here): {feedback.correct_selector}")
    if feedback.correct_value:
        lines.append(f"  Correct value: {feedback.correct_value}")
    if feedback.correct_pattern:
        lines.append(f"  Values must match: {feedback.correct_pattern}")
    if feedback.examples:
        examples = [e.model_dump(mode="json") for e in feedback.examples]
        lines.append(f"  Expected: {json.dumps(examples, ensure_ascii=False)}")
    lines += ["", f"TEST URL: {url}"]
    if tried:
        lines += ["", "ALREADY TRIED (do not propose again):", *(f"- {t}" for t in tried)]
    lines += [
        "",
        f"OUTLINE OF {where.upper()} (the scope the selector is searched in):",
        outline,
        "",
        "INSTRUCTIONS:",
        "1. If notes provided: find the elements in the outline matching the description",
        "2. If examples provided: pick the element whose text gives the expected output",
        "3. Ensure selectors are specific enough to avoid false positives",
        "Return the candidates as JSON.",
    ]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


@dataclass
class _Best:
    """The version kept so far: its document, its run's items and analysis, its attempt."""

    document: dict[str, Any]
    items: list[Any] = field(default_factory=list)
    analysis: OutputAnalysis | None = None
    attempt: int = 0


class RecipeRefinement:
    """Refines a recipe session's field bindings; iterate `run()`, then read `outcome`."""

    def __init__(
        self,
        state: SessionState,
        feedback: list[FieldFeedback],
        *,
        settings: Settings,
        llm: LLM | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        target_coverage: float = TARGET_COVERAGE,
    ) -> None:
        """Checks now what would stop the refinement: RefinementError, one line."""
        if not feedback:
            raise RefinementError("no feedback to act on: name at least one field and its issue")
        self.feedback = list(feedback)
        self.llm = llm
        self.max_attempts = max_attempts
        self.target_coverage = target_coverage
        self.outcome: RefinementOutcome | None = None
        self.document = current_recipe(state)
        try:
            parse_recipe(self.document, "the session's recipe")
        except RecipeError as exc:
            raise RefinementError(str(exc).splitlines()[0]) from None
        url = state.test_context.get("url")
        if not isinstance(url, str) or not url:
            raise RefinementError("the session has no test url to run the recipe on")
        self.url = url
        lacking = [f.field for f in feedback if not f.correct_selector]
        if lacking and llm is None:
            raise RefinementError(
                f"no selector for {', '.join(lacking)} and no model to propose one: "
                "give the correct selector (--selector) or configure a model (--model)"
            )
        try:
            self.executable = settings.chromium or find_chromium()
        except BrowserError as exc:
            raise RefinementError(str(exc)) from None
        self.max_items = state.params.get("max_items")
        self.before = state.analysis
        self.original = original_artifact(state, "recipe", _dump(self.document), "json")
        self.version = next_version(state, "recipe") + (1 if self.original else 0)
        self._step = max(state.steps, default=0)
        self._token = uuid.uuid4().hex[:6]
        self._tried: dict[str, list[tuple[FieldSelector, str]]] = {f.field: [] for f in feedback}
        """Per field, the selectors refused so far and why (told to the model)."""
        self._asked_user: set[str] = set()

    async def run(self) -> AsyncIterator[Event]:
        """The refinement's events (issue 7's protocol); sets `outcome` at the end."""
        if self.original is not None:
            yield self.original
        best = _Best(self.document)
        remaining = list(self.feedback)
        fixed: list[str] = []
        attempt = 0
        error: str | None = None
        browser = Browser(self.executable)
        try:
            await browser.start()
            while remaining and attempt < self.max_attempts:
                attempt += 1
                names = [f.field for f in remaining]
                yield RefinementProgress(
                    attempt=attempt,
                    max_attempts=self.max_attempts,
                    message=f"Attempt {attempt}/{self.max_attempts}: fixing "
                    + ", ".join(f"{f.field} ({f.issue})" for f in remaining),
                    fixed=list(fixed),
                    remaining=names,
                )
                proposals: dict[str, tuple[Group, FieldSelector]] = {}
                async for event in self._propose(browser, best.document, remaining, proposals):
                    yield event
                resolved: list[str] = []
                if proposals:
                    run = self._attempt(browser, attempt, best, remaining, proposals, resolved)
                    async for event in run:
                        yield event
                fixed += resolved
                remaining = [f for f in remaining if f.field not in resolved]
                yield RefinementProgress(
                    attempt=attempt,
                    max_attempts=self.max_attempts,
                    message=progress_message(fixed, remaining),
                    fixed=list(fixed),
                    remaining=[f.field for f in remaining],
                )
                if self.llm is None:
                    break  # the user's selectors were all there was to try
        except (LLMError, BrowserError, RecipeError, RefinementError) as exc:
            error = str(exc).splitlines()[0]
            yield Log(level="error", message=f"refinement stopped: {error}")
        finally:
            await browser.close()
        candidate = None
        if best.analysis is not None:
            checks = [self._check(f, best.analysis, best.items) for f in self.feedback]
            candidate = Artifact(
                name="recipe",
                content=_dump(best.document),
                format="json",
                version=self.version,
                origin=f"refinement attempt {best.attempt}",
                candidate=True,
                summary=version_summary(checks),
            )
            yield candidate
        yield RefinementProgress(
            attempt=attempt,
            max_attempts=self.max_attempts,
            message=outcome_message(fixed, remaining) + (f" ({error})" if error else ""),
            fixed=list(fixed),
            remaining=[f.field for f in remaining],
        )
        self.outcome = RefinementOutcome(
            name="recipe",
            candidate=candidate,
            fixed=fixed,
            remaining=[f.field for f in remaining],
            attempts=attempt,
            items=best.items,
            analysis=best.analysis,
            error=error,
        )

    def _check(
        self, feedback: FieldFeedback, analysis: OutputAnalysis, items: list[Any]
    ) -> FieldCheck:
        return check_feedback(
            feedback, self.before, analysis, items, target_coverage=self.target_coverage
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
                    async for event in open_view(browser, document, self.url, group):
                        if isinstance(event, View):
                            views[group] = event
                        else:
                            yield event
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
            yield ToolResult(
                call_id=call.call_id,
                name=call.name,
                output=output if value is not None else problem,
                facts={"count": count, "value": value},
                ok=value is not None,
                duration=time.monotonic() - began,
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
        resolved: list[str],
    ) -> AsyncIterator[Event]:
        """Patch the proposals in, run, check; keep the version in `best` when it improved a
        field without lowering any coverage, and put the fields it fixed in `resolved`."""
        document = best.document
        for name, (group, spec) in proposals.items():
            document = patched(document, name, group, spec)
        recipe = parse_recipe(document, "the patched recipe")
        result = RunResult()
        label = f"refine-{self._token}-a{attempt}"
        async for event in run_in(
            browser, recipe, self.url, max_items=self.max_items, label=label, result=result
        ):
            yield event
        if not result.items:
            why = f"the recipe gave no items ({result.error or 'none saved'})"
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
            if c.resolved or coverage(analysis, c.field) > coverage(baseline, c.field)
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
            resolved.extend(c.field for c in checks if c.resolved)
        for check in checks:
            if not check.resolved and check.field in proposals:
                self._refuse(check.field, proposals[check.field][1], check.detail)


async def rerun_recipe(
    recipe_json: dict[str, Any], url: str, *, settings: Settings, max_items: int | None
) -> AsyncIterator[Event]:
    """Run an accepted recipe version on the session's url: its ToolCall / ToolResult, then
    ItemsExtracted(replace=True) with every item and OutputAnalyzed. A run that fails keeps
    the session's items and says why in an error Log."""
    recipe = parse_recipe(recipe_json, "the accepted recipe")
    browser = Browser(settings.chromium or find_chromium())
    result = RunResult()
    try:
        await browser.start()
        label = f"rerun-{uuid.uuid4().hex[:6]}"
        async for event in run_in(
            browser, recipe, url, max_items=max_items, label=label, result=result
        ):
            yield event
    except BrowserError as exc:
        result.error = str(exc)
    finally:
        await browser.close()
    if result.error is not None:
        yield Log(level="error", message=f"the re-run failed, the items stay: {result.error}")
        return
    yield ItemsExtracted(items=result.items, replace=True)
    yield OutputAnalyzed(analysis=analyze_output(result.items))


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)
