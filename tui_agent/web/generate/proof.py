"""Proving fragments in the browser: each action of the proof a ToolCall / ToolResult pair.

Load the page, read the list, find the controls, run a fragment's commands, read the list
again and check it against what the fragment promised (`ProofBench.prove`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.events import Event, Log, ToolCall, ToolResult
from tui_agent.llm.client import LLM
from tui_agent.web.generate.controls import Control, find_controls
from tui_agent.web.generate.list_checks import READ_LIST_JS, Check
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP
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


class ProofBench:
    """The page the generators prove their fragments on; every action is traced."""

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
        self.items: list[dict[str, Any]] = []
        self.ok = False
        """Whether the last step succeeded."""
        self.verdict = Check(False, "not run")
        """The last proof's verdict."""
        self._calls = 0

    async def step(
        self, name: str, arguments: dict[str, Any], work: Callable[[], Awaitable[tuple[str, Any]]]
    ) -> AsyncIterator[Event]:
        """One traced action; afterwards `self.ok` says whether it worked."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=arguments)
        yield call
        began = time.monotonic()
        facts: dict[str, Any] = {}
        try:
            output, facts = await work()
            self.ok = True
        except (CommandFailed, HardFailure, PlaywrightError) as exc:
            output, self.ok = first_line(exc), False
        yield tool_result(call, began, output, facts, ok=self.ok)

    async def load(self) -> AsyncIterator[Event]:
        """Load the URL afresh and wait for the list's items (self.ok False if they never come)."""

        async def work() -> tuple[str, dict[str, Any]]:
            await goto(self.page, self.url, wait_until="domcontentloaded", timeout=LOAD_TIMEOUT_MS)
            await self.actions.wait_for_list(max(LOAD_TIMEOUT_MS, int(self.wait * 1000)))
            return f"loaded {self.url}", {"url": self.page.url}

        async for event in self.step("load_page", {"url": self.url}, work):
            yield event

    async def read(self) -> AsyncIterator[Event]:
        """Read the list's items into `self.items`."""

        async def work() -> tuple[str, dict[str, Any]]:
            read = {"item": self.item_selector, "siblings": self.item_siblings}
            self.items = await self.page.evaluate(READ_LIST_JS, read)
            first = self.items[0]["text"][:60] if self.items else ""
            shown = f"{len(self.items)} items" + (f", the first: {first!r}" if first else "")
            return shown, {"count": len(self.items)}

        self.items = []
        async for event in self.step("read_list", {"selector": self.item_selector}, work):
            yield event

    async def find(self) -> AsyncIterator[Event]:
        """Find the page's controls into `self.controls`."""

        async def work() -> tuple[str, dict[str, Any]]:
            self.controls = await find_controls(self.page, self.item_selector)
            lines = [control.describe() for control in self.controls] or ["no form controls"]
            facts = {
                kind: sum(control.kind == kind for control in self.controls)
                for kind in dict.fromkeys(control.kind for control in self.controls)
            }
            return "\n".join(lines), facts

        async for event in self.step("find_controls", {}, work):
            yield event

    async def run_commands(self, commands: list[dict[str, Any]]) -> AsyncIterator[Event]:
        """Run fragment commands in order; stops at the first that fails (self.ok False)."""
        try:
            recipe = parse_recipe(
                {
                    "bindings": self.bindings.model_dump(exclude_none=True, exclude_unset=True),
                    "recipe": {"id": "fragment", "name": "fragment", "commands": commands},
                },
                "the fragment",
            )
        except RecipeError as exc:
            yield Log(level="warning", message=str(exc).replace("\n", " "))
            self.ok = False
            return
        for command, written in zip(recipe.recipe.commands, commands, strict=True):
            async for event in self.step(written["type"], written, self._action(command)):
                yield event
            if not self.ok:
                return

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
    ) -> AsyncIterator[Event]:
        """Load the page afresh, run `commands`, read the list and `check` it.

        The verdict is in `self.verdict` and reported as a `name` ToolCall / ToolResult pair
        once the list could be read (`expect`: what was asked).
        """
        self.verdict = Check(False, f"{self.url} did not show the list again")
        async for event in self.load():
            yield event
        if not self.ok:
            return
        async for event in self.run_commands(commands):
            yield event
        if not self.ok:
            self.verdict = Check(False, f"the fragment {summary(commands)} did not run")
            return
        async for event in self.read():
            yield event
        self.verdict = check(self.items)
        for event in self.report(name, expect, self.verdict):
            yield event

    def report(self, name: str, expect: dict[str, Any], verdict: Check) -> list[Event]:
        """A check's ToolCall / ToolResult pair: what was expected, and the evidence."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=expect)
        result = ToolResult(call_id=call.call_id, name=name, output=verdict.evidence, ok=verdict.ok)
        return [call, result]


def summary(commands: list[dict[str, Any]]) -> str:
    """ "SELECT -> CLICK -> WAIT_FOR"."""
    return " -> ".join(command["type"] for command in commands)
