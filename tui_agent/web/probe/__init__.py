"""Probing a live page: the planner's tools, the list finder and the page outline.

`Probes` runs probe_click, describe_element and scroll_and_observe in a Playwright page and keeps
the selectors they verified; `find_lists` finds the page's repeated lists (`with_featured` adds
an item shown apart before one); `dom_snapshot` is a compact outline of the page for a model.
"""

from tui_agent.web.probe.featured import with_featured
from tui_agent.web.probe.list_finder import ListCandidate, find_lists
from tui_agent.web.probe.results import ProbeResult, VerifiedSelectors
from tui_agent.web.probe.snapshot import dom_snapshot
from tui_agent.web.probe.specs import TOOL_SPECS
from tui_agent.web.probe.tools import Probes, traced

__all__ = [
    "TOOL_SPECS",
    "ListCandidate",
    "ProbeResult",
    "Probes",
    "VerifiedSelectors",
    "dom_snapshot",
    "find_lists",
    "traced",
    "with_featured",
]
