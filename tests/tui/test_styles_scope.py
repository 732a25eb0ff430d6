"""Every rule of every stylesheet names the screen or widget it styles, so no rule of one screen
can hide or restyle another's widgets.

Textual loads a screen's CSS_PATH into the app-wide stylesheet the first time the screen opens,
and it stays there: an unanchored `.field-error { display: none }` of the feedback form then
hides the new-session form's errors too, but only once feedback has been opened. So:

- each selector starts with a type: one of our own screens or widgets (`FeedbackModal
  .field-error`, `StepCard > .code`), never a bare class, id or Textual widget;
- a sheet loaded only by screens (their CSS_PATH) starts only with those screens' types;
- the app's own sheets may also style Textual's app chrome (APP_CHROME), the same on every
  screen from the first frame on;
- every sheet is loaded by the app or a screen (none is left over);
- a class's inline `CSS` (loaded app-wide, like a sheet) starts only with that class, and
  no `DEFAULT_CSS` is left unscoped (`SCOPED_CSS = False`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.app import App
from textual.css.model import SelectorType
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen
from textual.widget import Widget

import tui_agent.tui
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.paths import styles_dir

APP_CHROME = {
    "ToastRack": "where toasts show: at the top, clear of the fields typed in at the bottom",
}
"""Textual widgets the app's own sheets style on every screen alike (and why)."""


def _subclasses(cls: type[Widget]) -> Iterator[type[Widget]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def own_types() -> dict[str, type[Widget]]:
    """Our screens and widgets by CSS type name (every module of the TUI imported first)."""
    for module in pkgutil.walk_packages(tui_agent.tui.__path__, "tui_agent.tui."):
        importlib.import_module(module.name)
    return {
        cls.__name__: cls for cls in _subclasses(Widget) if cls.__module__.startswith("tui_agent.")
    }


def paths(css_path: object) -> list[Path]:
    """A CSS_PATH (one path or a list of them) as resolved paths."""
    given = css_path if isinstance(css_path, list | tuple) else [css_path] if css_path else []
    return [Path(str(path)).resolve() for path in given]


def app_sheets() -> set[Path]:
    return set(paths(TuiAgentApp.CSS_PATH))


def screens_loading(sheet: Path) -> set[str]:
    """The type names of the screens whose own CSS_PATH names `sheet`."""
    return {
        name
        for name, cls in own_types().items()
        if issubclass(cls, Screen) and sheet in paths(cls.__dict__.get("CSS_PATH"))
    }


def selectors(sheet: Path | tuple[str, str]) -> list[tuple[str, SelectorType, str]]:
    """(selector as written out, type of its first part, name of its first part) of every rule
    of a sheet (or of (name, css) text), nesting resolved by Textual's own parser."""
    stylesheet = Stylesheet(variables=App().get_css_variables())
    if isinstance(sheet, Path):
        stylesheet.read(sheet)
    else:
        stylesheet.add_source(sheet[1], read_from=(sheet[0], ""))
    stylesheet.parse()
    return [
        (selector_set.css, selector_set.selectors[0].type, selector_set.selectors[0].name)
        for rule in stylesheet.rules
        for selector_set in rule.selector_set
    ]


SHEETS = sorted(styles_dir().glob("*.tcss"))


def test_every_sheet_is_checked_and_loaded() -> None:
    assert {sheet.name for sheet in SHEETS} >= {"app.tcss", "feedback.tcss", "diff.tcss"}
    for sheet in SHEETS:
        assert sheet.resolve() in app_sheets() or screens_loading(sheet.resolve()), (
            f"{sheet.name} is loaded by neither the app nor a screen"
        )


@pytest.mark.parametrize("sheet", SHEETS, ids=[sheet.name for sheet in SHEETS])
def test_every_rule_is_anchored_to_its_screen_or_widget(sheet: Path) -> None:
    sheet = sheet.resolve()
    ours = set(own_types())
    app_wide = sheet in app_sheets()
    owners = ours | set(APP_CHROME) if app_wide else screens_loading(sheet)
    loose = [
        css
        for css, kind, name in selectors(sheet)
        if kind is not SelectorType.TYPE or name not in owners
    ]
    assert not loose, (
        f"{sheet.name}: rules that reach beyond "
        + ("our own screens and widgets" if app_wide else " / ".join(sorted(owners)))
        + ": start each with the screen or widget it styles\n  "
        + "\n  ".join(loose)
    )


def test_inline_css_is_anchored_and_default_css_scoped() -> None:
    loose = [
        f"{name}: {css}"
        for name, cls in own_types().items()
        if cls.__dict__.get("CSS")
        for css, kind, first in selectors((name, cls.__dict__["CSS"]))
        if kind is not SelectorType.TYPE or first != name
    ]
    unscoped = [
        name for name, cls in own_types().items() if cls.__dict__.get("SCOPED_CSS") is False
    ]
    assert not loose and not unscoped, (loose, unscoped)


def test_the_check_catches_a_loose_rule(tmp_path: Path) -> None:
    """A bare class, a Textual widget and a nested rule under a bare id are each caught."""
    sheet = tmp_path / "loose.tcss"
    sheet.write_text(
        "FeedbackModal .ok { color: red; }\n"
        ".field-error { display: none; }\n"
        "Button { margin: 1; }\n"
        "#dialog { Input { width: 1fr; } }\n"
    )
    found = [(css, kind is SelectorType.TYPE and name) for css, kind, name in selectors(sheet)]
    assert found == [
        ("FeedbackModal .ok", "FeedbackModal"),
        (".field-error", False),
        ("Button", "Button"),
        ("#dialog", False),
        ("#dialog Input", False),
    ]
    assert "Button" not in own_types()
    assert selectors(("SomeScreen", "#x { color: red; }")) == [("#x", SelectorType.ID, "x")]
