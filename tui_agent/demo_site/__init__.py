"""A local demo shop with known ground truth: one URL per list-detail layout.

`with DemoSite() as site: page.goto(site.url("panel"))`, then compare what was extracted
with `ground_truth("panel", base_url=site.base_url)` (or `site.ground_truth("panel")`).
"""

from tui_agent.demo_site.data import (
    BATCH_DELAY_MS,
    BATCH_SIZE,
    CATEGORIES,
    FIELDS,
    LAYOUTS,
    MISSING_RULES,
    PAGE_COUNT,
    PAGE_SIZE,
    PRODUCT_COUNT,
    SLOW_DELAY_MS,
    SORTS,
    DemoSiteError,
    ground_truth,
)
from tui_agent.demo_site.server import DemoSite, serve

__all__ = [
    "BATCH_DELAY_MS",
    "BATCH_SIZE",
    "CATEGORIES",
    "FIELDS",
    "LAYOUTS",
    "MISSING_RULES",
    "PAGE_COUNT",
    "PAGE_SIZE",
    "PRODUCT_COUNT",
    "SLOW_DELAY_MS",
    "SORTS",
    "DemoSite",
    "DemoSiteError",
    "ground_truth",
    "serve",
]
