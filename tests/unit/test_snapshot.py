"""The snapshot's text: its header of lists, and the token cap that is never exceeded."""

import pytest

from tui_agent.web.probe import ListCandidate
from tui_agent.web.probe.snapshot import CHARS_PER_TOKEN, outline_text

LIST = ListCandidate(
    container="#results",
    item="div.result",
    count=40,
    signature="div.result > a, p",
    sample="First result  About it",
    links=40,
)
LINES = [f"  div.result#{n} {'text ' * 10}" for n in range(300)]


def test_a_small_page_is_shown_whole():
    text = outline_text("Jobs", "http://x/jobs", [LIST], LINES[:3], max_tokens=2500)
    assert text.startswith("PAGE: Jobs — http://x/jobs")
    assert "- `div.result`: 40 in `#results` (40 with links)" in text
    assert text.endswith(LINES[2]) and "cut at its cap" not in text


def test_no_list_is_said_plainly():
    assert "REPEATED LISTS: none found" in outline_text("T", "u", [], [], max_tokens=100)


@pytest.mark.parametrize("max_tokens", [1, 20, 200, 1000])
def test_the_cap_is_never_exceeded_and_says_it_was_hit(max_tokens):
    text = outline_text("Jobs", "http://x/jobs", [LIST], LINES, max_tokens=max_tokens)
    assert len(text) <= max_tokens * CHARS_PER_TOKEN
    if max_tokens >= 100:
        omitted = 300 + 4 - (text.count("\n"))
        assert text.endswith(
            f"cut at its cap of ~{max_tokens} tokens: {omitted} more lines not shown]"
        )
