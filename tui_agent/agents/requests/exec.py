"""The request of an exec session: one program run in a sandbox, its result analysed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from tui_agent.agents.requests.base import Option, RequestBase, Seconds
from tui_agent.agents.requests.fields import ModelOffForm, Network, Sandbox, Workspace
from tui_agent.analysis.shapes import AgentType


class ExecRequest(RequestBase):
    """`tui-agent exec FILE.py`: run a program in a sandbox as a recorded session."""

    kind: Literal["exec"] = "exec"
    summary: ClassVar[str] = "run a Python file in a sandbox"

    code: Annotated[
        str,
        Option(
            "the program: its main() is called with the arguments",
            metavar="FILE.py",
            label="Python file",
            placeholder="path/to/program.py",
            reader="text_file",
            keeps_path="file",
        ),
    ]
    file: str | None = None
    """The file the code was read from, for display."""
    args: Annotated[
        list[Any],
        Option(
            "an argument for main(); JSON literals (5, true, [1]) are decoded, else text",
            flag="--arg",
            metavar="A",
            label="Arguments for main() (JSON literals are decoded)",
            placeholder='5 "text" [1, 2]',
            items="json_literal",
        ),
    ] = []
    context: Annotated[
        dict[str, Any] | None,
        Option(
            "a JSON object: `context`",
            flag="--context",
            metavar="ctx.json",
            label="Context: a JSON file holding an object, passed in as context (optional)",
            placeholder="path/to/context.json",
            reader="json_object_file",
            keeps_path="context_file",
        ),
    ] = None
    context_file: str | None = None
    url: Annotated[
        str | None,
        Option(
            "render this page in Chromium and pass `url` and `html` in",
            flag="--url",
            label="URL to render in Chromium (optional: passes url and html in)",
            placeholder="http://127.0.0.1:8000/panel",
            url=True,
        ),
    ] = None
    agent_type: Annotated[
        AgentType | None,
        Option(
            "what the code does; feedback forms and refinement prompts follow it "
            "(default: scraper with --url, else generic)",
            flag="--agent-type",
            label="What the code does (feedback follows it)",
            row="kind",
            choice_labels={None: "auto: scraper with a URL, else generic"},
        ),
    ] = None
    timeout: Annotated[
        Seconds,
        Option(
            "seconds ({default:g})",
            flag="--timeout",
            metavar="S",
            label="Timeout (seconds)",
            row="kind",
        ),
    ] = 30.0
    sandbox: Sandbox = None
    network: Network = False
    workspace: Workspace = None
    model: ModelOffForm = None

    @property
    def title(self) -> str:
        return f"exec {Path(self.file).name}" if self.file else "exec"
