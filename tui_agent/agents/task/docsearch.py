"""The `search_documentation(library, query)` tool: API documentation of the packages installed in
the sandbox that will run the generated code, read there with inspect (never from the network).

`doc_search_request` builds the sandbox run that answers a call (the search itself is
docsearch_probe.py, sent as source and run in a namespace of its own, so the sandbox's globals are
left as they were); `read_doc_answer` turns its result into the text handed back to the model.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

from tui_agent.agents.task import docsearch_probe
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult

TOOL_NAME = "search_documentation"
ENTRYPOINT = "_tui_agent_search_documentation"
SEARCH_DOCUMENTATION_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Look up the API documentation of a Python library installed in the sandbox that "
            "runs your code: its version and the functions, classes, methods and properties "
            "whose names and docstrings best match the query, each with its signature and the "
            "first paragraph of its docstring. Use it before calling an API you are not sure "
            "of. A library that is not installed is reported with installed packages of "
            "similar names."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "library": {
                    "type": "string",
                    "description": (
                        "The library as you would import it, or a dotted path into it to narrow "
                        "the search: 'pandas', 'fitz' (PyMuPDF), 'pypdf', 'pandas.DataFrame', "
                        "'fitz.Page'. Distribution names such as 'PyMuPDF' or 'scikit-learn' "
                        "are accepted too."
                    ),
                },
                "query": {
                    "type": "string",
                    "description": (
                        "A few words naming what you want to do or the member you want, e.g. "
                        "'read csv file', 'extract text from a page', 'DataFrame.merge'. Empty: "
                        "list the library's main names."
                    ),
                },
            },
            "required": ["library", "query"],
            "additionalProperties": False,
        },
    },
}
"""The tool's spec in OpenAI function-calling format."""

_LAUNCHER = f'''
def {ENTRYPOINT}(library, query, source):
    del globals()["{ENTRYPOINT}"]
    namespace = {{"__name__": "tui_agent_docsearch"}}
    exec(compile(source, "<search_documentation>", "exec"), namespace)
    return namespace["search"](library, query)
'''
"""The code the sandbox runs: one function, called by the kernel with the library, the query
and the search's source, that removes itself from the globals before doing anything else."""


@cache
def _probe_source() -> str:
    return inspect.getsource(docsearch_probe)


def doc_search_request(library: str, query: str, *, timeout: float = 15.0) -> ExecuteRequest:
    """The sandbox run answering `search_documentation(library, query)`: its value is the
    answer's text; the sandbox's globals (and its `context`) are as they were afterwards."""
    return ExecuteRequest(
        code=_LAUNCHER,
        args=[library, query, _probe_source()],
        entrypoint=ENTRYPOINT,
        timeout=timeout,
    )


def read_doc_answer(result: ExecuteResult, library: str, query: str) -> str:
    """The text handed back to the model for the run of `doc_search_request(library, query)`:
    the search's answer, or one line saying why there is none (never an exception)."""
    if result.success and isinstance(result.result, str) and result.result:
        return result.result
    call = f"{TOOL_NAME}({library!r}, {query!r})"
    if result.timed_out:
        return f"{call} did not finish in time: {_first_line(result)}"
    if result.success:
        return f"{call} gave no answer (the sandbox returned {type(result.result).__name__})."
    return f"{call} failed in the sandbox: {_first_line(result)}"


def _first_line(result: ExecuteResult) -> str:
    if result.error is None:
        return result.killed_reason or "no error was reported"
    lines = result.error.message.strip().splitlines()
    return f"{result.error.type}: {lines[0] if lines else 'no message'}"
