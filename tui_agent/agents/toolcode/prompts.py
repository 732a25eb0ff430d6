"""What the tool code agent tells its model: the two tools, how to write a program with the
generated packages, and (for models without native tool calls) the text protocol."""

from __future__ import annotations

from typing import Any

from tui_agent.llm import Message

DISCOVER = "discover_code_files"
WRITE_CODE = "write_code"

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": DISCOVER,
            "description": (
                "List the Python packages generated from the MCP servers (one `<server>_tools` "
                "package per server, one function per tool) and workspace_tools, with each "
                "function's signature and description. Call it before writing code."
            ),
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": WRITE_CODE,
            "description": (
                "Run one Python program in the sandbox and get what it printed. The program "
                "imports the generated packages and calls many tools in one go: loops, "
                "branches, data shaping. `args` reach it as sys.argv[1:]."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "the whole Python program"},
                    "args": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "command-line arguments for the program (optional)",
                    },
                },
                "required": ["code"],
            },
        },
    },
]

SYSTEM_PROMPT = """\
You solve the user's task by writing Python programs that call tools. Instead of calling one \
tool per turn, you write one program that imports the tools as Python functions and calls as \
many as it needs: loops, conditions, data shaping, chaining one tool's output into the next.

TOOLS
- discover_code_files(): the generated packages: one `<server>_tools` package per MCP server, \
one function per tool, with signatures and descriptions, and workspace_tools for files.
- write_code(code, args?): runs your program in a sandbox and returns what it printed. `args` \
(a list of strings) reach the program as sys.argv[1:].

HOW TO WRITE THE PROGRAM
- Import the functions: `from weather_tools import forecast` (or `import weather_tools`). Call \
them with keyword arguments; each returns a str.
- Print every tool output you need to see: printed text is all you get back.
- A tool error is a str starting with "Error:": check `output.startswith("Error:")` and handle \
it. A call that cannot complete (server gone, too slow) raises ToolCallFailed.
- Files: only through workspace_tools.read_workspace_file(filepath=...), \
update_workspace_file(filepath=..., content=...) and list_workspace(path=...), with paths \
relative to the workspace (data/file.txt). No open(), pathlib reads or writes, os file \
functions, absolute paths or `..`.
- No processes, network, eval/exec or importlib: the program is checked before it runs and \
refused with the reason if it uses them.
- Each program runs fresh (nothing is kept between programs) and has {timeout:g} seconds.

When the task is done, answer the user in plain text without calling a tool."""

TEXT_PROTOCOL = """\
CALLING A TOOL
You call a tool by writing a line that starts with CALL and the tool's name:
CALL discover_code_files
CALL write_code {"args": ["optional", "arguments"]}
```python
from weather_tools import forecast
print(forecast(city="Paris"))
```
For write_code, put the program in one ```python block right after the CALL line. Then stop \
and wait: the results come back in a message of RESULT blocks. Never write RESULT yourself. \
When the task is done, answer without a CALL line."""


def system_message(timeout: float, *, text_protocol: bool) -> Message:
    prompt = SYSTEM_PROMPT.format(timeout=timeout)
    if text_protocol:
        prompt = f"{prompt}\n\n{TEXT_PROTOCOL}"
    return {"role": "system", "content": prompt}


def task_message(task: str, packages: list[str]) -> Message:
    listed = ", ".join(packages)
    return {
        "role": "user",
        "content": f"TASK: {task}\n\nPackages available: {listed}. "
        "Call discover_code_files to see their functions.",
    }
