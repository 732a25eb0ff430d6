"""Project-wide test settings and the scripted model server."""

import os
from collections.abc import Iterator

import pytest
from support.scripted_model import ScriptedModel

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    """A running scripted model with an empty script (tests `push` replies)."""
    with ScriptedModel() as scripted:
        yield scripted
