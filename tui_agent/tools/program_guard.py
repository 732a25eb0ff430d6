"""Checking a program before it runs, on its syntax tree.

Refused: imports and calls that start processes or reach past the tools (`subprocess`,
`os.system` and the exec / spawn family, `ctypes`, `socket`, `importlib`, `__import__`,
`eval` / `exec`), deleting trees (`shutil.rmtree`), direct file access (`open`, pathlib reads
and writes, `os.remove`, ...) where the workspace tools do the job, and paths that are
absolute or go up with `..`. Each refusal names what was refused and what to use instead.

This is a guard against a model's mistakes, not a security boundary: a determined program can
get around any such check. What contains a program is the sandbox it runs in (no network, the
workspace as its only writable folder) and the folder guards of the workspace tools.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

TOOLS = "call the generated tool functions (see discover_code_files) instead"
FILES = "use workspace_tools.read_workspace_file / update_workspace_file / list_workspace instead"
PATHS = "use a path relative to the workspace, e.g. data/file.txt"

FORBIDDEN_MODULES = {
    "subprocess": f"programs start no processes; {TOOLS}",
    "multiprocessing": f"programs start no processes; {TOOLS}",
    "pty": f"programs start no processes; {TOOLS}",
    "ctypes": f"no native code; {TOOLS}",
    "cffi": f"no native code; {TOOLS}",
    "socket": f"the program has no network; {TOOLS}",
    "ssl": f"the program has no network; {TOOLS}",
    "http.client": f"the program has no network; {TOOLS}",
    "urllib.request": f"the program has no network; {TOOLS}",
    "requests": f"the program has no network; {TOOLS}",
    "httpx": f"the program has no network; {TOOLS}",
    "importlib": "import modules with a plain import statement",
    "tempfile": f"no direct file access; {FILES}",
    "glob": f"no direct file access; {FILES}",
}
"""Module (and its submodules) -> why it is refused and what to use."""

FORBIDDEN_CALLS = {
    "open": FILES,
    "eval": "write the code itself instead of evaluating a string",
    "exec": "write the code itself instead of executing a string",
    "compile": "write the code itself instead of compiling a string",
    "__import__": "import modules with a plain import statement",
    "breakpoint": "programs run unattended; print what you need to see",
}
"""Builtins that may not be called."""

PROCESS_FUNCTIONS = re.compile(
    r"^(system|popen|fork|forkpty|kill|killpg|exec\w*|spawn\w*|posix_spawn\w*)$"
)
FILE_FUNCTIONS = {
    "os": {
        "open", "fdopen", "remove", "unlink", "rmdir", "removedirs", "rename", "renames",
        "replace", "mkdir", "makedirs", "listdir", "scandir", "walk", "chmod", "chown",
        "symlink", "link", "truncate", "mkfifo", "mknod", "utime",
    },
    "shutil": {
        "rmtree", "copy", "copy2", "copyfile", "copytree", "move", "chown", "make_archive",
        "unpack_archive", "copyfileobj",
    },
    "codecs": {"open"},
    "io": {"open", "open_code", "FileIO"},
}  # fmt: skip
"""Module -> functions that touch files (and, in os, processes: PROCESS_FUNCTIONS)."""
PATH_METHODS = {
    "read_text", "write_text", "read_bytes", "write_bytes", "open", "unlink", "rmdir",
    "mkdir", "touch", "symlink_to", "hardlink_to", "iterdir", "glob", "rglob", "chmod",
}  # fmt: skip
"""Methods of pathlib paths that touch files."""
ROOT_FOLDERS = re.compile(
    r"^/(etc|home|root|usr|var|tmp|proc|sys|dev|bin|sbin|lib|lib64|opt|mnt|srv|boot|run|"
    r"workspace|media|snap)(/|$)"
)


@dataclass(frozen=True)
class Refusal:
    """One thing the program may not do: where, what, and what to do instead."""

    line: int
    what: str
    instead: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}: {self.instead}"


def check_program(code: str) -> list[Refusal]:
    """Everything refused in `code`, in the order it appears (empty: it may run). A program
    that does not parse is refused with the parser's message."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        what = f"the program does not parse: {exc.msg}"
        return [Refusal(exc.lineno or 0, what, "fix the syntax and send the whole program")]
    visitor = _Visitor()
    visitor.visit(tree)
    return sorted(visitor.refusals, key=lambda r: r.line)


def refusal_text(refusals: list[Refusal]) -> str:
    """What the model is told about a refused program (it was not run)."""
    lines = "\n".join(f"- {refusal}" for refusal in refusals)
    return f"Error: validation failed, the program was not run:\n{lines}"


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.refusals: list[Refusal] = []
        self.aliases: dict[str, str] = {}
        """Local name -> the module (or module.function) it stands for."""

    def refuse(self, node: ast.AST, what: str, instead: str) -> None:
        self.refusals.append(Refusal(getattr(node, "lineno", 0), what, instead))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            problem = _forbidden_module(alias.name)
            if problem:
                self.refuse(node, f"forbidden import `{alias.name}`", problem)
            top = alias.name.split(".")[0]
            self.aliases[alias.asname or top] = alias.name if alias.asname else top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            return
        problem = _forbidden_module(module)
        if problem:
            self.refuse(node, f"forbidden import `{module}`", problem)
            return
        for alias in node.names:
            submodule = _forbidden_module(f"{module}.{alias.name}")
            if submodule:
                self.refuse(node, f"forbidden import `{module}.{alias.name}`", submodule)
                continue
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
            problem = _module_function(module, alias.name)
            if problem:
                self.refuse(node, f"forbidden import `{module}.{alias.name}`", problem)

    def visit_Call(self, node: ast.Call) -> None:
        target = self._dotted(node.func)
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            resolved = self.aliases.get(node.func.id, node.func.id)
            if "." not in resolved:
                name = node.func.id
                kind = "direct file access" if name == "open" else "forbidden call"
                self.refuse(node, f"{kind} `{name}()`", FORBIDDEN_CALLS[name])
        if target:
            module, _, function = target.rpartition(".")
            problem = _module_function(module, function)
            if problem:
                self.refuse(node, f"forbidden call `{target}()`", problem)
        func = node.func
        on_path = isinstance(func, ast.Attribute) and self._is_path(func.value)
        if isinstance(func, ast.Attribute) and func.attr in PATH_METHODS and on_path:
            self.refuse(node, f"direct file access `.{func.attr}()` on a path", FILES)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            text = node.value.strip()
            if text == ".." or text.startswith("../") or "/../" in text or text.endswith("/.."):
                what = f"path outside boundary: {_short(text)} goes up with `..`"
                self.refuse(node, what, PATHS)
            elif ROOT_FOLDERS.match(text):
                what = f"path outside boundary: {_short(text)} is an absolute path"
                self.refuse(node, what, PATHS)

    def _dotted(self, node: ast.expr) -> str | None:
        """`os.path.join` for an attribute chain on a name, aliases resolved."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def _is_path(self, node: ast.expr) -> bool:
        """Whether `node` is plainly a pathlib path: Path(...), a name bound to Path, or a
        path joined with `/`."""
        if isinstance(node, ast.Call):
            name = self._dotted(node.func) or ""
            return name.split(".")[-1] in ("Path", "PurePath", "PosixPath", "cwd", "home")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self._is_path(node.left)
        return False


def _forbidden_module(module: str) -> str | None:
    """Why importing `module` is refused (None: it is not)."""
    parts = module.split(".")
    for size in range(1, len(parts) + 1):
        problem = FORBIDDEN_MODULES.get(".".join(parts[:size]))
        if problem:
            return problem
    return None


def _module_function(module: str, function: str) -> str | None:
    """Why `module.function` is refused (None: it is not)."""
    top = module.split(".")[0]
    if top == "os" and PROCESS_FUNCTIONS.match(function):
        return f"programs start no processes; {TOOLS}"
    if top == "os" and module != "os.path" and function in FILE_FUNCTIONS["os"]:
        return f"no direct file access; {FILES}"
    if top in ("shutil", "codecs", "io") and function in FILE_FUNCTIONS[top]:
        return f"no direct file access; {FILES}"
    if top == "builtins" and function in FORBIDDEN_CALLS:
        return FORBIDDEN_CALLS[function]
    return None


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")
