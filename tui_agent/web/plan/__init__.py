"""Planning a page: from a live page and a task to a strategy whose every selector is verified.

`OfflinePlanner` finds the list, the click behaviour and the details' fields with the probes
alone; `StrategyPlanner` lets a model explore with the same probes. Both are phases (see
web.phase) ending with a `PlanOutcome`: a verified `Strategy`, or why there is none.
`parse_intent` reads what a scraping task asks of the list (count, filters, order, search) in
English, Spanish, French, German or Portuguese; `intent_prompt` / `read_intent` have a model
read a task in any other language.
"""

from tui_agent.web.plan.intent_model import intent_prompt, read_intent
from tui_agent.web.plan.llm_planner import StrategyPlanner
from tui_agent.web.plan.offline_planner import OfflinePlanner
from tui_agent.web.plan.outcome import PlanOutcome
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
    known_language,
    needed_generators,
    parse_intent,
    sort_field,
)

__all__ = [
    "SORT_KEYS",
    "Fragment",
    "GeneratorName",
    "OfflinePlanner",
    "PlanOutcome",
    "Strategy",
    "StrategyField",
    "StrategyPlanner",
    "TaskIntent",
    "intent_prompt",
    "known_language",
    "needed_generators",
    "parse_intent",
    "parse_strategy",
    "read_intent",
    "sort_field",
]
