"""A fault injected into Dask workers from the worker side: a plugin the test registers on a
cluster (`client.register_plugin`), sent to every worker and to each worker a nanny starts
again after one died. It acts on the tasks of one batch item (task keys are
`item-{child}-{attempt}`, engines.py) and leaves a file behind for each worker it kills, so a
test counts the deaths.

The module is pickled by value (`by_value`): the workers import nothing from the tests.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin


def by_value() -> None:
    """Send this module's classes to the workers as code, not as a name they cannot import."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def deaths(folder: Path) -> list[str]:
    """The worker deaths the plugin left in `folder` (one file each: `pid key`)."""
    return sorted(p.read_text() for p in folder.glob("death-*"))


class CrashEveryTime(WorkerPlugin):
    """The worker process exits at once whenever item `child` starts on it: an item that
    crashes the worker running it, every time."""

    def __init__(self, child: str, folder: Path) -> None:
        self.child = child
        self.folder = str(folder)

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if finish == "executing" and isinstance(key, str) and f"-{self.child}-" in key:
            pid = os.getpid()
            Path(self.folder, f"death-{pid}").write_text(f"{pid} {key}")
            os._exit(17)
