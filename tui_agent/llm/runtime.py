"""litellm, imported on first use (it takes seconds) and set up for offline use."""

from __future__ import annotations

import os
from functools import cache
from types import ModuleType


@cache
def litellm() -> ModuleType:
    """The litellm module with the local price map and no debug banners."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as module

    module.suppress_debug_info = True
    return module
