"""Forms filled from the task's words, for a page whose list exists only once a form is used.

`choose_option(options, task)` picks the select option the task names (its words, in order, in
the task: case, plurals and simple endings do not matter; a placeholder such as "----------"
or "All" never); `text_for(intent)` is what a text input gets (the search term, else the
filter values). `fill_form(page, task, intent)` fills the best form control by control in
document order, reading the form again after each one (a select that reloads the page on
change, a dependent select whose options appear only then), submits it (its button, else
Enter in the last input typed, else the selects' own reload) and returns what it did as
Filter / Search fragments whose commands the recipe replays before it waits for the list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import settled
from tui_agent.web.plan.form_scripts import FORMS_JS
from tui_agent.web.plan.intent_words import STOP_WORDS
from tui_agent.web.plan.strategy import Fragment
from tui_agent.web.plan.task_intent import TaskIntent

PLACEHOLDER = re.compile(
    r"^\s*(?:all\b|any\b|select\b|choose\b|none\b|tod[oa]s\b|cualquier|tous\b|toutes\b"
    r"|alle\b|tudo\b|-+|\W*$)",
    re.IGNORECASE,
)
"""An option label that means "no choice" ("All categories", "Choose...", "----------")."""
SORT_NAMES = {
    "sort", "sortby", "order", "orderby", "ordering", "sorting", "sorted", "ordenar", "orden",
    "trier", "tri", "sortieren", "sortierung", "ordem", "classificar",
}  # fmt: skip
"""Words that name a control that orders the list (never filled as a filter)."""
MAX_STEPS = 6
"""Controls filled at most in one form."""
ACTION_TIMEOUT_MS = 5000
LOAD_TIMEOUT_MS = 15000
READ_TRIES = 4


def words(text: str) -> list[str]:
    """Lower-case words of any script, camelCase split."""
    return re.findall(r"[^\W_]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())


def stem(word: str) -> str:
    """A word without a plural or a simple ending, and without a final e: "tags", "tagged" ->
    "tag"; "change", "changes", "changed" -> "chang"."""
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "ls":
                word = word[:-1]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def is_placeholder(value: str, label: str) -> bool:
    """An option that means "no choice": an empty value, or a label like "All" or "-----"."""
    return value == "" or bool(PLACEHOLDER.match(label))


def _named(phrase: list[str], task: list[str]) -> bool:
    """Whether the stems of `phrase` occur in a row in the task's stems."""
    size = len(phrase)
    return any(task[start : start + size] == phrase for start in range(len(task) - size + 1))


def option_score(value: str, label: str, task: str) -> int:
    """How well the task names an option (0: not at all): the words of its label (or value)
    found in a row in the task, more words scoring higher, the exact spelling a little more."""
    if is_placeholder(value, label):
        return 0
    said = [stem(word) for word in words(task)]
    best = 0
    for text in (label, value):
        found = words(text)
        if not found or all(word.isdigit() or word in STOP_WORDS for word in found):
            continue
        if _named([stem(word) for word in found], said):
            exact = 1 if text.lower() in task.lower() else 0
            best = max(best, 10 * len(found) + exact)
    return best


def choose_option(options: list[dict[str, Any]], task: str) -> dict[str, Any] | None:
    """The option the task names best (the first of equals), or None."""
    scored = [(option_score(o["value"], o["label"], task), -i, o) for i, o in enumerate(options)]
    best = max(scored, key=lambda entry: entry[:2], default=None)
    return best[2] if best is not None and best[0] > 0 else None


def text_for(intent: TaskIntent) -> str | None:
    """What a text input of the form gets: the search term, else the filter values."""
    return intent.search or (" ".join(intent.filters) if intent.filters else None)


def _sorts(control: dict[str, Any]) -> bool:
    return bool(SORT_NAMES & set(words(f"{control['name']} {control['label']}")))


@dataclass(frozen=True)
class FormStep:
    """One control filled: the command that does it and what it chose."""

    kind: str
    selector: str
    command: dict[str, Any]
    shown: str
    """The option's label or the text typed."""


@dataclass
class FormFill:
    """What filling a form did: its steps, how it was submitted, and the fragments."""

    steps: list[FormStep] = field(default_factory=list)
    submit: dict[str, Any] | None = None

    def fragments(self) -> list[Fragment]:
        """The steps as Filter (a select) / Search (an input) fragments, in order: the first
        waits for its control (the list comes only after the form), the last submits."""
        made: list[Fragment] = []
        for index, step in enumerate(self.steps):
            commands = [step.command]
            if index == 0:
                commands.insert(0, {"type": "WAIT_FOR", "condition": {"exists": step.selector}})
            if index == len(self.steps) - 1 and self.submit is not None:
                commands.append(self.submit)
            search = step.kind == "input"
            made.append(
                Fragment(
                    generator="SearchGenerator" if search else "FilterGenerator",
                    description=(f"search for {step.shown!r}" if search else f"filter to "
                                 f"{step.shown!r}") + f" with the form's `{step.selector}`",
                    target=step.selector,
                    option=step.command.get("value") or step.command.get("text") or step.shown,
                    commands=commands,
                )
            )  # fmt: skip
        return made

    def describe(self) -> str:
        """One line: what was chosen and typed, and how the form was sent."""
        done = [f"{s.shown!r} in `{s.selector}`" for s in self.steps]
        sent = self.submit
        how = (
            f"submitted with `{sent['selector']}`"
            if sent and sent["type"] == "CLICK"
            else "submitted with Enter"
            if sent
            else "sent by the selects themselves"
        )
        return f"filled {', '.join(done)}; {how}"


def _step(control: dict[str, Any], task: str, intent: TaskIntent) -> FormStep | None:
    """The step the task asks of one control, or None."""
    selector = control["selector"]
    if control["kind"] == "select":
        if _sorts(control):
            return None
        option = choose_option(control["options"], task)
        if option is None or option.get("selected"):
            return None
        unique = sum(o["value"] == option["value"] for o in control["options"]) == 1
        value = {"value": option["value"]} if unique else {"label": option["label"]}
        return FormStep("select", selector, {"type": "SELECT", "selector": selector, **value},
                        option["label"])  # fmt: skip
    text = text_for(intent)
    if not text:
        return None
    return FormStep("input", selector, {"type": "TYPE", "selector": selector, "text": text}, text)


def _chosen(form: dict[str, Any], task: str, intent: TaskIntent, done: set[str]) -> int:
    return sum(1 for c in form["controls"] if c["selector"] not in done and _step(c, task, intent))


async def _run(page: Page, command: dict[str, Any], wait: float) -> None:
    """Do one form command as the recipe will, then let the page settle."""
    target = page.locator(command["selector"]).first
    if command["type"] == "SELECT":
        choice = {k: command[k] for k in ("value", "label") if k in command}
        await target.select_option(**choice, timeout=ACTION_TIMEOUT_MS)
    elif command["type"] == "TYPE":
        await target.fill(command["text"], timeout=ACTION_TIMEOUT_MS)
    elif command["type"] == "PRESS":
        await target.press(command["key"], timeout=ACTION_TIMEOUT_MS)
    else:
        await target.click(timeout=ACTION_TIMEOUT_MS)
    await page.wait_for_load_state("domcontentloaded")
    await settled(page, wait)


async def _forms(page: Page) -> list[dict[str, Any]]:
    """The page's forms, read again if a navigation the last step started replaced the page
    while they were read (a select that sends its form on change)."""
    for _ in range(READ_TRIES - 1):
        try:
            return list(await page.evaluate(FORMS_JS))
        except PlaywrightError:
            await page.wait_for_load_state("load")
    return list(await page.evaluate(FORMS_JS))


async def has_form(page: Page) -> bool:
    """Whether the page shows a form with a select or a text input."""
    return bool(await _forms(page))


async def fill_form(page: Page, task: str, intent: TaskIntent, *, wait: float) -> FormFill:
    """Fill the form the task names most controls of (see the module), submit it, and say
    what was done; no steps when no form control is named by the task."""
    filled = FormFill()
    done: set[str] = set()
    chosen: str | None = None
    for _ in range(MAX_STEPS):
        forms = await _forms(page)
        if chosen is None:
            ranked = sorted(forms, key=lambda f: -_chosen(f, task, intent, done))
            forms = ranked[:1] if ranked and _chosen(ranked[0], task, intent, done) else []
        form = next((f for f in forms if chosen is None or f["selector"] == chosen), None)
        if form is None:
            break
        chosen = form["selector"]
        pending = [c for c in form["controls"] if c["selector"] not in done]
        step = next((s for c in pending if (s := _step(c, task, intent)) is not None), None)
        if step is None:
            break
        await _run(page, step.command, wait)
        done.add(step.selector)
        filled.steps.append(step)
    if not filled.steps:
        return filled
    forms = await _forms(page)
    form = next((f for f in forms if f["selector"] == chosen), None)
    last = filled.steps[-1]
    if form is not None and form["submit"]:
        filled.submit = {"type": "CLICK", "selector": form["submit"]}
    elif last.kind == "input":
        filled.submit = {"type": "PRESS", "selector": last.selector, "key": "Enter"}
    if filled.submit is not None:
        try:
            await _run(page, filled.submit, wait)
        except PlaywrightError:
            filled.submit = None
    return filled


async def replay_form(page: Page, url: str, filled: FormFill, wait: float) -> None:
    """Load `url` afresh and fill the form again as `filled` did."""
    await goto(page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
    await settled(page, wait)
    for fragment in filled.fragments():
        for command in fragment.commands:
            if command["type"] == "WAIT_FOR":
                await page.wait_for_selector(command["condition"]["exists"])
            else:
                await _run(page, command, wait)
