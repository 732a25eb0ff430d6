"""The step loop the CodeAct and tool code agents share: they differ only in what a step does.

`session_parts` checks what a session starts with (model, price, sandbox, approval);
`StepLoop` runs it: the sandbox and what else the session holds, from its start to its end, and
within it runs of steps under `StepLimits`, each ending with one `Stop`. `Phase` times the
steps of a preparation.
"""

from tui_agent.agents.step_loop.loop import DEFAULT_MAX_STEPS, StepLimits, StepLoop, Stop
from tui_agent.agents.step_loop.phase import Phase
from tui_agent.agents.step_loop.start import SessionParts, needs_approval, session_parts

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Phase",
    "SessionParts",
    "StepLimits",
    "StepLoop",
    "Stop",
    "needs_approval",
    "session_parts",
]
