"""The step loop the CodeAct and tool code agents share: they differ only in what a step does.

`StepLoop` runs a session: the sandbox and what else the session holds, from its start to its
end, and within it runs of steps under `StepLimits`, each ending with one `Stop`. `Phase` times
the steps of a preparation. What a session starts with is checked by the launch path
(agents/launch/), before anything is recorded.
"""

from tui_agent.agents.step_loop.loop import DEFAULT_MAX_STEPS, StepLimits, StepLoop, Stop
from tui_agent.agents.step_loop.phase import Phase

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Phase",
    "StepLimits",
    "StepLoop",
    "Stop",
]
