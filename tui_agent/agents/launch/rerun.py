"""A recorded session's request, to start again: as it was started, with what the user changes.

The request stored in a session's SessionStarted is read back as it was (settings resolved
when it started). `--model` and `--api-base` replace its model and its model server; a context
given replaces its context, and is needed when the stored one had secrets (they were masked
before storing). A session imported from a file is someone else's input: its code gets no
network unless the user allows it now, its sandbox, workspace, API base (unless given) and MCP
config are this machine's settings (never the file's), its page is checked as a typed one is
(by `prepare`), and what it runs is shown as a `RunPlan` to approve first.
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.agents.refine.run_settings import Allowances, RunPlan
from tui_agent.agents.requests import (
    ExecRequest,
    RecipeRunRequest,
    RequestBase,
    RequestError,
    parse_request,
    request_from_json,
)
from tui_agent.agents.requests.base import field_options
from tui_agent.agents.requests.readers import read
from tui_agent.events import SessionStarted


def rerun_request(
    started: SessionStarted,
    *,
    model: str | None = None,
    api_base: str | None = None,
    context: str | None = None,
    imported: bool = False,
    allowed: Allowances | None = None,
) -> RequestBase:
    """The request `started` carries, with `model`, `api_base` (a kind with a model server)
    and the context file `context` in place of its own (when given); an imported session's
    network is what `allowed` says and its settings-backed fields other than the model and
    the API base given are this machine's."""
    if started.request is None:
        raise RequestError(
            None, "it was recorded without the request it started from, so it cannot run again"
        )
    stored = request_from_json(started.request)
    cls = type(stored)
    data: dict[str, Any] = stored.to_json()
    if model:
        data["model"] = model
    if context is not None:
        data.update(_context(cls, context))
    elif started.request_masked:
        raise RequestError(
            "context", "its context held secrets, masked before it was stored", unset=True
        )
    if imported:
        if "network" in cls.model_fields:
            data["network"] = (allowed or Allowances()).network
        for name, option in field_options(cls):
            if option.setting and name != "model":
                data[name] = None
    if api_base is not None and "api_base" in cls.model_fields:
        data["api_base"] = api_base
    return parse_request(cls, data)


def _context(cls: type[RequestBase], path: str) -> dict[str, Any]:
    option = dict(field_options(cls)).get("context")
    if option is None or option.reader is None:
        kind = cls.model_fields["kind"].default
        raise RequestError("context", f"a {kind} session takes no context")
    loaded = {"context": read(option.reader, path, "context")}
    if option.keeps_path is not None:
        loaded[option.keeps_path] = path
    return loaded


def rerun_plan(
    session_id: str, imported_from: str, request: RequestBase, allowed: Allowances
) -> RunPlan:
    """What running `request` of imported session `session_id` again runs, to approve first."""
    if isinstance(request, ExecRequest):
        content, language = request.code, "python"
    elif isinstance(request, RecipeRunRequest):
        content, language = json.dumps(request.recipe, indent=2), "json"
    else:
        content, language = json.dumps(request.to_json(), indent=2, ensure_ascii=False), "json"
    data = request.to_json()
    rows = [("file", imported_from), ("kind", request.kind)]
    rows += [(name, str(data[name])) for name in ("model", "sandbox", "workspace") if name in data]
    if "network" in data:
        network = "ON (--network)" if allowed.network else "off (--network turns it on)"
        rows.append(("network", network))
    if data.get("url"):
        rows.append(("page", f"{data['url']} (loaded in Chromium)"))
    action = "run it again: a new session, as it was started"
    return RunPlan(session_id, imported_from, action, content, language, rows)
