"""A local demo shop with known ground truth: one URL per list-detail layout.

`with DemoSite() as site: page.goto(site.url("panel"))`, then compare what was extracted
with `ground_truth("panel", base_url=site.base_url)` (or `site.ground_truth("panel")`).
"""

from tui_agent.demo_site.data import (
    BATCH_DELAY_MS,
    BATCH_SIZE,
    CATEGORIES,
    ES_FIELDS,
    FIELDS,
    LAYOUTS,
    MISSING_RULES,
    PAGE_COUNT,
    PAGE_SIZE,
    PRODUCT_COUNT,
    PRODUCTS,
    PROSE_FACTS,
    ROWS_PAGE_SIZE,
    SLOW_DELAY_MS,
    SORTS,
    DemoSiteError,
    ground_truth,
    prose_facts,
)
from tui_agent.demo_site.server import DemoSite, serve

__all__ = [
    "BATCH_DELAY_MS",
    "BATCH_SIZE",
    "CATEGORIES",
    "ES_FIELDS",
    "FIELDS",
    "LAYOUTS",
    "MISSING_RULES",
    "PAGE_COUNT",
    "PAGE_SIZE",
    "PRODUCTS",
    "PRODUCT_COUNT",
    "PROSE_FACTS",
    "ROWS_PAGE_SIZE",
    "SLOW_DELAY_MS",
    "SORTS",
    "DemoSite",
    "DemoSiteError",
    "ground_truth",
    "prose_facts",
    "serve",
]
