"""The recipe writer: strategy + fragments + task -> a recipe, proven by a dry run.

`build_recipe` writes bindings and commands straight from a Strategy (no model). The
RecipeWriter gets its recipe from the model when it has one (an answer in the recipe's JSON
Schema) or from `build_recipe`, validates it, dry-runs it on a couple of items and accepts it
only when they were saved with every named field read. A failed dry run gets one repair round:
the model sees the error and its recipe; offline, fields read empty everywhere are dropped (or
read from the details by clicking when the list items did not show them). Its `run()` is a
phase (see web.phase) ending with the `RecipeOutcome`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tui_agent.events import Log
from tui_agent.web.browser import Browser
from tui_agent.web.generate.details_schema import read_schema, schema_prompt, with_parsing
from tui_agent.web.generate.dry_run import DryRun, DryRunOutcome, Verdict, named_fields, verdict
from tui_agent.web.generate.writer_prompts import (
    answer_json,
    repair_prompt,
    system_prompt,
    user_prompt,
)
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.plan import Fragment, Strategy, StrategyField
from tui_agent.web.recipe import DetailsParser, RecipeError, RecipeFile, parse_recipe

if TYPE_CHECKING:
    from tui_agent.llm.client import LLM, Message

ITEM_BODY: list[dict[str, Any]] = [
    {"type": "EXTRACT_DETAILS"},
    {"type": "SAVE", "as": "item"},
    {"type": "MARK_DONE"},
]
CLICK_BODY: list[dict[str, Any]] = [{"type": "CLICK"}, {"type": "WAIT_FOR", "target": "details"}]


# -- the offline recipe ------------------------------------------------------------------------


def clicks(strategy: Strategy) -> bool:
    """Whether each item is clicked: not when the items show every named details field, nor
    when there is nothing to click for (no click behaviour, or a panel that was not found)."""
    behavior = strategy.click_behavior
    if behavior is None or (behavior == "shows_panel" and not strategy.details_panel):
        return False
    covered = set(strategy.details_fields) <= set(strategy.item_fields)
    return not (strategy.item_fields and covered)


def _fields(fields: dict[str, StrategyField], leave_out: Collection[str] = ()) -> dict[str, Any]:
    return {name: spec.as_binding() for name, spec in fields.items() if name not in leave_out}


def _inside(selector: str, panel: str) -> bool:
    """Whether `selector` (relative to the item) names something inside `panel`."""
    return selector == panel or re.match(rf"{re.escape(panel)}\s*[\s>+~]", selector) is not None


def _bindings(strategy: Strategy, item: str, click: bool) -> dict[str, Any]:
    bindings: dict[str, Any] = {
        "LIST": strategy.list_container or "body",
        "LIST_ITEM": item,
        "PAGE_LOADED": {"exists": "body"},
        "LIST_LOADED": {"exists": item},  # as found: the item selector may name its list too
    }
    if strategy.list_item_siblings is not None:
        bindings["LIST_ITEM_SIBLINGS"] = strategy.list_item_siblings
    if strategy.pagination_button:
        bindings["NEXT_PAGE_BUTTON"] = strategy.pagination_button
        if strategy.pagination_text:
            bindings["NEXT_PAGE_TEXT"] = strategy.pagination_text
        if strategy.pagination_numbered:
            bindings["NEXT_PAGE_NUMBERED"] = True
    if not click:
        bindings["CLICK_BEHAVIOR"] = "inline"  # read inside the item itself, no click
        bindings["ITEM_FIELDS"] = _fields(strategy.item_fields)
        return bindings
    behavior = strategy.click_behavior
    panel = strategy.details_panel
    loaded = strategy.details_loaded
    if behavior == "inline" and panel:
        inner = [*strategy.details_content, *(f.selector for f in strategy.details_fields.values())]
        if not all(_inside(selector, panel) for selector in inner):
            # Fields relative to the item that lie outside the panel: read them in the item.
            panel, loaded = None, loaded or panel
    bindings["CLICK_BEHAVIOR"] = behavior
    if panel:
        bindings["DETAILS_PANEL"] = panel
    if loaded:
        bindings["DETAILS_LOADED"] = {"exists": loaded}
    if strategy.close_details:
        bindings["CLOSE_DETAILS"] = strategy.close_details  # details that block the list
    elif strategy.close_key:
        bindings["CLOSE_DETAILS"] = {"key": strategy.close_key}
    if strategy.details_content:
        bindings["DETAILS_CONTENT"] = list(strategy.details_content)
    item_fields = _fields(strategy.item_fields, leave_out=strategy.details_fields)
    if item_fields:
        bindings["ITEM_FIELDS"] = item_fields
    bindings["DETAILS_FIELDS"] = _fields(strategy.details_fields)
    return bindings


def fills_form(fragment: Fragment) -> bool:
    """Whether a fragment fills a form before any list shows: it starts by waiting for its
    own control (see plan.page_forms), so the list is waited for only after it."""
    first = fragment.commands[0] if fragment.commands else {}
    return first.get("type") == "WAIT_FOR" and "condition" in first


def _commands(
    strategy: Strategy, fragments: Sequence[Fragment], click: bool, wait_ms: int
) -> list[Any]:
    list_wait: dict[str, Any] = {"type": "WAIT_FOR", "target": "list"}
    if wait_ms != int(WAIT_CAP * 1000):  # a run's --wait is the least a list is waited for
        list_wait["timeout"] = wait_ms
    commands: list[dict[str, Any]] = [{"type": "WAIT_FOR", "target": "page"}]
    if not fragments or not fills_form(fragments[0]):
        commands.append(list_wait)
    for fragment in fragments:
        commands.extend(fragment.commands)
    if fragments:
        commands.append(list_wait)
    clicking: list[dict[str, Any]] = []
    if click and strategy.click_target:
        target = {"type": "CLICK", "selector": strategy.click_target, "within": "item"}
        clicking = [target, CLICK_BODY[1]]
    elif click:
        clicking = CLICK_BODY
    loop = {"type": "FOR_EACH_ITEM_IN_LIST", "body": clicking + ITEM_BODY}
    more: list[dict[str, Any]] = []
    if strategy.load_more_button:
        more.append({"type": "CLICK_IF_EXISTS", "selector": strategy.load_more_button})
    if strategy.scroll_loads_more:
        more.append({"type": "SCROLL", "target": "page"})
    if strategy.pagination_button:
        more.append({"type": "CLICK_IF_EXISTS", "target": "next_page"})
    commands.append({"type": "REPEAT", "body": [loop, *more]} if more else loop)
    commands.append({"type": "END"})
    return commands


def build_recipe(
    strategy: Strategy,
    fragments: Sequence[Fragment],
    *,
    recipe_id: str,
    name: str,
    max_items: int | None,
    wait: float = WAIT_CAP,
    click: bool | None = None,
) -> RecipeFile:
    """The recipe a strategy implies, validated; RecipeError when it cannot be written.

    `wait` (seconds) is how long the list is waited for after the page loads; `click` says
    whether each item is clicked for its details (None: as `clicks` decides)."""
    if not strategy.list_item:
        raise RecipeError("the strategy names no LIST_ITEM: there is no list to extract")
    click = clicks(strategy) if click is None else click and strategy.click_behavior is not None
    data = {
        "bindings": _bindings(strategy, strategy.list_item, click),
        "recipe": {
            "id": recipe_id,
            "name": name,
            "commands": _commands(strategy, fragments, click, int(wait * 1000)),
            "config": {} if max_items is None else {"maxItems": max_items},
        },
    }
    return parse_recipe(data, f"the recipe built for {recipe_id}")


def without_empty_fields(
    strategy: Strategy, recipe: RecipeFile, empty: Collection[str]
) -> Strategy:
    """The strategy minus the field selectors `recipe` read as empty for `empty` names.

    A details field leaves the item's selector of that name (if any) to be used instead; an
    item field that the details also name makes the items get clicked (see `clicks`).
    """
    by_details = {name for name in empty if name in recipe.bindings.DETAILS_FIELDS}
    by_item = {name for name in empty if name in recipe.bindings.ITEM_FIELDS} - by_details
    details = {n: f for n, f in strategy.details_fields.items() if n not in by_details}
    items = {n: f for n, f in strategy.item_fields.items() if n not in by_item}
    return strategy.model_copy(update={"details_fields": details, "item_fields": items})


def _clicks_items(recipe: RecipeFile) -> bool:
    """Whether the recipe clicks each item (for its details)."""
    return any(
        command.type == "CLICK" and (command.selector is None or command.within == "item")
        for command in _walk(recipe)
    )


def describe(recipe: RecipeFile) -> str:
    """What a recipe does, in one line: how items are read, their fields, how more come in."""
    bindings = recipe.bindings
    clicked = _clicks_items(recipe)
    how = f"clicks each item ({bindings.CLICK_BEHAVIOR})" if clicked else "reads the list items"
    if bindings.LIST_ITEM_SIBLINGS is not None:
        how += " (each spread over sibling elements)"
    if clicked and bindings.CLOSE_DETAILS:
        how += f", then closes its details ({bindings.CLOSE_DETAILS.describe()})"
    fields = ", ".join(named_fields(recipe)) or "no named fields (text and link)"
    more = [
        {"SCROLL": "scrolls for more", "CLICK_IF_EXISTS": "clicks for more"}[command.type]
        for command in _walk(recipe)
        if command.type in ("SCROLL", "CLICK_IF_EXISTS")
    ]
    limit = recipe.recipe.config.max_items
    parts = [how, f"fields: {fields}", *more, f"max {limit} items" if limit else "every item"]
    return "; ".join(parts)


def _walk(recipe: RecipeFile) -> list[Any]:
    found: list[Any] = []
    pending = list(recipe.recipe.commands)
    while pending:
        command = pending.pop(0)
        found.append(command)
        pending.extend(getattr(command, "body", []))
    return found


def recipe_identity(url: str, task: str) -> tuple[str, str]:
    """A recipe id from the URL's host and path, and a name from the task."""
    parsed = urlparse(url)
    host = (parsed.hostname or "page").removeprefix("www.")
    slug = re.sub(r"[^a-z0-9]+", "-", f"{host} {parsed.path}".lower()).strip("-")
    return slug[:60].rstrip("-") or "recipe", task.strip() or f"Items from {url}"


# -- the generator -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecipeOutcome:
    """The accepted recipe and what its dry run saved, or why no recipe was accepted."""

    recipe: RecipeFile | None
    dry_run_items: list[dict[str, Any]] = field(default_factory=list)
    """What the last dry run saved."""
    failure: str | None = None
    """One line, set exactly when there is no recipe."""

    def __post_init__(self) -> None:
        if (self.recipe is None) == (self.failure is None):
            raise ValueError("a RecipeOutcome holds a recipe or a failure, not both or neither")


@dataclass(frozen=True)
class _Trial:
    """One dry run judged: the recipe tried, what it saved, and the verdict."""

    recipe: RecipeFile
    items: list[dict[str, Any]]
    verdict: Verdict

    def outcome(self) -> RecipeOutcome:
        """The recipe as accepted, or the verdict's error."""
        accepted = self.recipe if self.verdict.ok else None
        return RecipeOutcome(accepted, self.items, self.verdict.error)


class _Aborted(Exception):
    """A dry run could not happen at all: no recipe can be proved."""


class RecipeWriter:
    """Writes a recipe (by model or by rule), dry-runs it, repairs it once if needed; `run()`
    yields the events, then the RecipeOutcome."""

    def __init__(
        self,
        browser: Browser,
        url: str,
        strategy: Strategy,
        task: str,
        *,
        fragments: Sequence[Fragment] = (),
        max_items: int | None = None,
        llm: LLM | None = None,
        dry_run_items: int = 2,
        wait: float = WAIT_CAP,
        parser: DetailsParser | None = None,
        parse_details: bool = False,
    ) -> None:
        """`parser` (a model) reads fields from the details' text when no selector names any,
        or always with `parse_details`; `wait` caps the waits for a page to render."""
        self.browser = browser
        self.wait = wait
        self.parser = parser
        self.parse_details = parse_details
        self.url = url
        self.strategy = strategy
        self.task = task
        self.fragments = list(fragments)
        self.max_items = max_items
        self.llm = llm
        self.dry_run_size = dry_run_items
        self.recipe_id, self.name = recipe_identity(url, task)
        self._dry_runs = 0

    async def run(self) -> Phase[RecipeOutcome]:
        """The events of writing and proving the recipe, then the outcome."""
        written: RecipeOutcome | None = None
        try:
            work = self._offline() if self.llm is None else self._by_model(self.llm)
            first = PhaseRun(work, RecipeOutcome)
            async for event in first:
                yield event
            written = first.outcome
            if written.recipe is not None and self._wants_parsing(written.recipe):
                parsed = PhaseRun(self._add_parsing(written), RecipeOutcome)
                async for event in parsed:
                    yield event
                written = parsed.outcome
        except _Aborted as exc:
            failure = f"the dry run could not run: {exc}"
            if written is None:
                written = RecipeOutcome(None, failure=failure)
            else:  # while trying to parse the details: the recipe stands without parsing
                yield Log(level="warning", message=f"parsing left out: {failure}")
        yield written

    # -- parsing the details' text with the model ------------------------------------------------

    def _wants_parsing(self, recipe: RecipeFile) -> bool:
        if self.parser is None:
            return False
        named = set(recipe.bindings.DETAILS_FIELDS) | set(recipe.bindings.ITEM_FIELDS)
        return self.parse_details or not (named - {"title", "url"})

    async def _add_parsing(self, kept: RecipeOutcome) -> Phase[RecipeOutcome]:
        """Have the model propose the fields the details' text gives, then dry-run the recipe
        that parses them; it replaces `kept` only when the parsed fields came back."""
        assert self.parser is not None and kept.recipe is not None
        recipe, items = kept.recipe, kept.dry_run_items
        if not _clicks_items(recipe) and self.strategy.click_behavior is not None:
            yield Log(message="details parsing needs the details' text: each item is clicked")
            try:
                recipe = self._build(self.strategy, click=True)
            except RecipeError as exc:
                yield Log(level="warning", message=f"parsing left out: {_one_line(exc)}")
                yield kept
                return
            clicking = PhaseRun(self._try(recipe), _Trial)
            async for event in clicking:
                yield event
            if not clicking.outcome.verdict.ok:
                yield Log(level="warning", message="parsing left out: the clicking recipe failed")
                yield kept
                return
            items = clicking.outcome.items
        texts = [str(item["text"]) for item in items if item.get("text")]
        if not texts:
            yield Log(level="warning", message="no details text to parse: parsing left out")
            yield kept
            return
        known = list(named_fields(recipe))
        reason = "asked for" if self.parse_details else "no selector names the details' fields"
        yield Log(message=f"details parsing ({reason}): the model proposes their fields")
        reply = await self.parser.llm.complete(
            schema_prompt(self.task, texts, known), want_json=True, purpose="details schema"
        )
        yield reply.call
        schema = read_schema(reply.text, known)
        if schema is None:
            yield Log(
                level="warning",
                message=f"the model proposed no fields ({reply.text[:80]!r}): parsing left out",
            )
            yield kept
            return
        trial = PhaseRun(self._try(with_parsing(recipe, schema)), _Trial)
        async for event in trial:
            yield event
        parsed = trial.outcome
        read = [n for n in schema if any(item.get(n) not in (None, "") for item in parsed.items)]
        if parsed.verdict.ok and read:
            yield Log(message=f"the details are parsed into {', '.join(schema)}")
            yield parsed.outcome()
            return
        yield Log(
            level="warning",
            message="the model read none of the proposed fields in the dry run: parsing left out",
        )
        yield kept

    # -- offline -------------------------------------------------------------------------------

    async def _offline(self) -> Phase[RecipeOutcome]:
        try:
            recipe = self._build(self.strategy)
        except RecipeError as exc:
            yield RecipeOutcome(None, failure=_one_line(exc))
            return
        yield Log(level="info", message=f"recipe built from the strategy: {describe(recipe)}")
        first = PhaseRun(self._try(recipe), _Trial)
        async for event in first:
            yield event
        judged = first.outcome.verdict
        repaired = None if judged.ok else self._repair(recipe, judged)
        if repaired is None:
            yield first.outcome.outcome()
            return
        for name in judged.empty:
            yield Log(level="warning", message=_field_note(name, judged, repaired))
        yield Log(level="info", message=f"repaired recipe: {describe(repaired)}")
        second = PhaseRun(self._try(repaired), _Trial)
        async for event in second:
            yield event
        yield second.outcome.outcome()

    def _build(self, strategy: Strategy, click: bool | None = None) -> RecipeFile:
        return build_recipe(
            strategy,
            self.fragments,
            recipe_id=self.recipe_id,
            name=self.name,
            max_items=self.max_items,
            wait=self.wait,
            click=click,
        )

    def _repair(self, recipe: RecipeFile, judged: Verdict) -> RecipeFile | None:
        """The recipe without the fields read empty everywhere; None when that changes nothing."""
        if not judged.empty:
            return None
        try:
            repaired = self._build(without_empty_fields(self.strategy, recipe, judged.empty))
        except RecipeError:
            return None
        return None if repaired == recipe else repaired

    # -- with a model --------------------------------------------------------------------------

    async def _by_model(self, llm: LLM) -> Phase[RecipeOutcome]:
        messages: list[Message] = [
            {"role": "system", "content": system_prompt()},
            {
                "role": "user",
                "content": user_prompt(self.strategy, self.fragments, self.task, self.max_items),
            },
        ]
        items: list[dict[str, Any]] = []
        for attempt in (1, 2):
            stream = llm.stream(messages, want_json=True, purpose="recipe", step=attempt)
            async for _ in stream:
                pass
            reply = stream.reply
            yield reply.call
            data: dict[str, Any] | None = None
            try:
                data = answer_json(reply.text)
                recipe = self._validate(data)
            except RecipeError as exc:
                error = _one_line(exc)
                yield Log(level="warning", message=f"the model's recipe is not valid: {error}")
            else:
                yield Log(level="info", message=f"recipe from the model: {describe(recipe)}")
                trial = PhaseRun(self._try(recipe), _Trial)
                async for event in trial:
                    yield event
                if trial.outcome.verdict.ok:
                    yield trial.outcome.outcome()
                    return
                items, error = trial.outcome.items, str(trial.outcome.verdict.error)
            if attempt == 2:
                yield RecipeOutcome(None, items, f"the model's recipe failed twice: {error}")
                return
            messages.append({"role": "assistant", "content": reply.text})
            messages.append({"role": "user", "content": repair_prompt(error, data)})

    def _validate(self, data: dict[str, Any]) -> RecipeFile:
        """The model's answer as a recipe: id and name filled in if left out, and the user's
        limit (or none) in place of any the model chose."""
        body = data.get("recipe")
        if isinstance(body, dict):
            body = {"id": self.recipe_id, "name": self.name, **body}
            given = body.get("config")
            given = given if isinstance(given, dict) else {}
            config = {key: value for key, value in given.items() if key != "maxItems"}
            if self.max_items is not None:
                config["maxItems"] = self.max_items
            body["config"] = config
            data = {**data, "recipe": body}
        return parse_recipe(data, "the model's recipe")

    # -- the dry run ---------------------------------------------------------------------------

    async def _try(self, recipe: RecipeFile) -> Phase[_Trial]:
        """A dry run's events, then the trial judged; _Aborted when it could not run."""
        self._dry_runs += 1
        count = self.dry_run_size
        yield Log(level="info", message=f"dry run {self._dry_runs} on {count} items: {self.url}")
        trial = DryRun(
            self.browser,
            self.url,
            recipe,
            items=count,
            number=self._dry_runs,
            wait=self.wait,
            parser=self.parser,
        )
        ran = PhaseRun(trial.run(), DryRunOutcome)
        async for event in ran:
            yield event
        result = ran.outcome
        if result.aborted is not None:
            raise _Aborted(result.aborted)
        judged = verdict(recipe, result, count)
        if judged.ok:
            saved = len(result.items)
            fields = len(named_fields(recipe))
            yield Log(
                level="info",
                message=f"recipe accepted: the dry run saved {saved} items, {fields} fields read",
            )
        else:
            yield Log(level="warning", message=f"dry run {self._dry_runs} failed: {judged.error}")
        yield _Trial(recipe, result.items, judged)


def _field_note(name: str, judged: Verdict, repaired: RecipeFile) -> str:
    now = named_fields(repaired).get(name)
    outcome = f"now read by {now}" if now else "dropped it from the recipe"
    return f"{judged.empty[name]} was empty in every dry-run item: {outcome}"


def _one_line(exc: RecipeError) -> str:
    """A RecipeError's listing as one line (its problems joined)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else "invalid recipe"
    return f"{lines[0].rstrip(':')}: {'; '.join(lines[1:])}"
