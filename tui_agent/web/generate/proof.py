"""Proving fragments in the browser: each action of the proof a ToolCall / ToolResult pair.

Load the page, read the list, find the controls, run a fragment's commands, read the list
again and check it against what the fragment promised (`ProofBench.prove`). Each action is a
phase (see web.phase): its events, then what it gave (a `Check`, the items, the controls).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.events import Event, Log, ToolCall, ToolResult
from tui_agent.llm.client import LLM
from tui_agent.web.generate.controls import Control, find_controls
from tui_agent.web.generate.list_checks import READ_LIST_JS, Check
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP, settled
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.recipe import (
    Bindings,
    Click,
    CommandFailed,
    HardFailure,
    PageActions,
    Press,
    RecipeError,
    Select,
    TypeText,
    WaitFor,
    first_line,
    parse_recipe,
)
from tui_agent.web.tool_events import tool_result

LOAD_TIMEOUT_MS = 15_000


@dataclass(frozen=True)
class ListRead:
    """The list's items as read (none when they could not be)."""

    items: list[dict[str, Any]]


@dataclass(frozen=True)
class ControlsFound:
    """The page's form controls (none when they could not be found)."""

    controls: list[Control]


class ProofBench:
    """The page the generators prove their fragments on; every action is traced.

    `baseline` (the list as first read) and `controls` (the page's controls) are what the
    generators choose candidates from; the phase running them sets both.
    """

    def __init__(
        self,
        page: Page,
        url: str,
        item_selector: str,
        llm: LLM | None,
        *,
        item_siblings: str | int | None = None,
        wait: float = WAIT_CAP,
    ) -> None:
        self.page = page
        self.url = url
        self.item_selector = item_selector
        self.item_siblings = item_siblings
        self.llm = llm
        self.wait = wait
        self.bindings = Bindings(LIST_ITEM=item_selector, LIST_ITEM_SIBLINGS=item_siblings)
        self.actions = PageActions(page, self.bindings)
        self.baseline: list[dict[str, Any]] = []
        self.controls: list[Control] = []
        self._calls = 0

    async def step(
        self, name: str, arguments: dict[str, Any], work: Callable[[], Awaitable[tuple[str, Any]]]
    ) -> Phase[Check]:
        """One traced action, then whether it worked (with its output as the evidence)."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=arguments)
        yield call
        began = time.monotonic()
        facts: dict[str, Any] = {}
        try:
            output, facts = await work()
            ok = True
        except (CommandFailed, HardFailure, PlaywrightError) as exc:
            output, ok = first_line(exc), False
        yield tool_result(call, began, output, facts, ok=ok)
        yield Check(ok, output)

    async def load(self) -> Phase[Check]:
        """Load the URL afresh and wait for the list's items (not ok if they never come)."""

        async def work() -> tuple[str, dict[str, Any]]:
            await goto(self.page, self.url, wait_until="domcontentloaded", timeout=LOAD_TIMEOUT_MS)
            await self.actions.wait_for_list(max(LOAD_TIMEOUT_MS, int(self.wait * 1000)))
            return f"loaded {self.url}", {"url": self.page.url}

        async for item in self.step("load_page", {"url": self.url}, work):
            yield item

    async def arrive(self) -> Phase[Check]:
        """Load the URL afresh and wait for the page to settle (sooner once the list shows):
        not ok when it settles without the list (it may come only once a form is used)."""

        async def shown() -> bool:
            return bool(await self.page.locator(self.item_selector).count())

        async def work() -> tuple[str, dict[str, Any]]:
            await goto(self.page, self.url, wait_until="domcontentloaded", timeout=LOAD_TIMEOUT_MS)
            await settled(self.page, self.wait, ready=shown)
            if not await shown():
                raise CommandFailed(f"{self.item_selector} is not shown at {self.page.url}")
            return f"loaded {self.url}", {"url": self.page.url}

        async for item in self.step("load_page", {"url": self.url}, work):
            yield item

    async def read(self) -> Phase[ListRead]:
        """Read the list's items."""
        items: list[dict[str, Any]] = []

        async def work() -> tuple[str, dict[str, Any]]:
            nonlocal items
            read = {"item": self.item_selector, "siblings": self.item_siblings}
            items = await self.page.evaluate(READ_LIST_JS, read)
            first = items[0]["text"][:60] if items else ""
            shown = f"{len(items)} items" + (f", the first: {first!r}" if first else "")
            return shown, {"count": len(items)}

        async for event in PhaseRun(
            self.step("read_list", {"selector": self.item_selector}, work), Check
        ):
            yield event
        yield ListRead(items)

    async def find(self) -> Phase[ControlsFound]:
        """Find the page's controls."""
        controls: list[Control] = []

        async def work() -> tuple[str, dict[str, Any]]:
            nonlocal controls
            controls = await find_controls(self.page, self.item_selector)
            lines = [control.describe() for control in controls] or ["no form controls"]
            facts: dict[str, Any] = {
                kind: sum(control.kind == kind for control in controls)
                for kind in dict.fromkeys(control.kind for control in controls)
            }
            return "\n".join(lines), facts

        async for event in PhaseRun(self.step("find_controls", {}, work), Check):
            yield event
        yield ControlsFound(controls)

    async def run_commands(self, commands: list[dict[str, Any]]) -> Phase[Check]:
        """Run fragment commands in order; stops at the first that fails (not ok)."""
        try:
            recipe = parse_recipe(
                {
                    "bindings": self.bindings.model_dump(exclude_none=True, exclude_unset=True),
                    "recipe": {"id": "fragment", "name": "fragment", "commands": commands},
                },
                "the fragment",
            )
        except RecipeError as exc:
            problem = str(exc).replace("\n", " ")
            yield Log(level="warning", message=problem)
            yield Check(False, problem)
            return
        done = Check(True, summary(commands))
        for command, written in zip(recipe.recipe.commands, commands, strict=True):
            stepped = PhaseRun(self.step(written["type"], written, self._action(command)), Check)
            async for event in stepped:
                yield event
            if not stepped.outcome.ok:
                done = stepped.outcome
                break
        yield done

    def _action(self, command: Any) -> Callable[[], Awaitable[tuple[str, Any]]]:
        async def work() -> tuple[str, Any]:
            if isinstance(command, WaitFor):
                return await self.actions.wait_for(command, None)
            if isinstance(command, Click):
                return await self.actions.click_selector(command, None)
            assert isinstance(command, TypeText | Select | Press)
            return await self.actions.interact(command)

        return work

    async def prove(
        self,
        name: str,
        expect: dict[str, Any],
        commands: list[dict[str, Any]],
        check: Callable[[list[dict[str, Any]]], Check],
    ) -> Phase[Check]:
        """Load the page afresh, run `commands`, read the list and `check` it: the verdict,
        also reported as a `name` ToolCall / ToolResult pair once the list could be read
        (`expect`: what was asked)."""
        loaded = PhaseRun(self.load(), Check)
        async for event in loaded:
            yield event
        if not loaded.outcome.ok:
            yield Check(False, f"{self.url} did not show the list again")
            return
        ran = PhaseRun(self.run_commands(commands), Check)
        async for event in ran:
            yield event
        if not ran.outcome.ok:
            yield Check(False, f"the fragment {summary(commands)} did not run")
            return
        listed = PhaseRun(self.read(), ListRead)
        async for event in listed:
            yield event
        verdict = check(listed.outcome.items)
        for event in self.report(name, expect, verdict):
            yield event
        yield verdict

    def report(self, name: str, expect: dict[str, Any], verdict: Check) -> list[Event]:
        """A check's ToolCall / ToolResult pair: what was expected, and the evidence."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=expect)
        result = ToolResult(call_id=call.call_id, name=name, output=verdict.evidence, ok=verdict.ok)
        return [call, result]


def summary(commands: list[dict[str, Any]]) -> str:
    """ "SELECT -> CLICK -> WAIT_FOR"."""
    return " -> ".join(command["type"] for command in commands)
