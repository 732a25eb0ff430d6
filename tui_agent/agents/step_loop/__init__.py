"""The step loop the CodeAct and tool code agents share: they differ only in what a step does.

`StepLoop` runs a session: the sandbox and what else the session holds, from its start to its
end, and within it runs of steps under `StepLimits`, each ending with one `Stop`. `Phase` times
the steps of a preparation. A `Conversation` makes the session one of turns (conversation.py);
a `Continuation` continues a stored one, its state restored (resume.py). What a session starts
with is checked by the launch path (agents/launch/), before anything is recorded.
"""

from tui_agent.agents.step_loop.conversation import Conversation
from tui_agent.agents.step_loop.loop import (
    DEFAULT_MAX_STEPS,
    INTERRUPTED,
    ModelMaker,
    StepLimits,
    StepLoop,
    Stop,
)
from tui_agent.agents.step_loop.phase import Phase
from tui_agent.agents.step_loop.resume import (
    Continuation,
    FailureChoice,
    FixedChoices,
    RestoreChoices,
    RestoreRun,
    flag_of,
    fork_events,
    successful_runs,
)

__all__ = [
    "DEFAULT_MAX_STEPS",
    "INTERRUPTED",
    "Continuation",
    "Conversation",
    "FailureChoice",
    "FixedChoices",
    "ModelMaker",
    "Phase",
    "RestoreChoices",
    "RestoreRun",
    "StepLimits",
    "StepLoop",
    "Stop",
    "flag_of",
    "fork_events",
    "successful_runs",
]
