"""Planning a page: from a live page and a task to a strategy whose every selector is verified.

`OfflinePlanner` finds the list, the click behaviour and the details' fields with the probes
alone; `StrategyPlanner` lets a model explore with the same probes. Both hand on a `Strategy`.
`parse_intent` reads what a scraping task asks of the list (count, filters, order, search).
"""

from tui_agent.web.plan.llm_planner import StrategyPlanner
from tui_agent.web.plan.offline_planner import OfflinePlanner
from tui_agent.web.plan.strategy import (
    Fragment,
    GeneratorName,
    Strategy,
    StrategyField,
    parse_strategy,
)
from tui_agent.web.plan.task_intent import (
    SORT_KEYS,
    TaskIntent,
    needed_generators,
    parse_intent,
    sort_field,
)

__all__ = [
    "SORT_KEYS",
    "Fragment",
    "GeneratorName",
    "OfflinePlanner",
    "Strategy",
    "StrategyField",
    "StrategyPlanner",
    "TaskIntent",
    "needed_generators",
    "parse_intent",
    "parse_strategy",
    "sort_field",
]
