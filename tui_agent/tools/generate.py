"""Writing the generated packages to a folder, only when they are not there already.

A package is left alone only when its folder holds exactly the files the host would write now,
byte for byte: what is checked is the host's own output, never a record kept beside the files
(whoever could change the files could rewrite that too). Each package keeps a `_manifest.json`
(the hash of the tool list it was written from, see `ServerTools.digest`, and of each file)
for people and tools to read. A package is written beside the old one and then swapped in, so
a reader never sees half of it. Files are readable by all (the sandbox user imports them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_agent.errors import UserError
from tui_agent.tools.catalog import GENERATOR_VERSION, ServerTools
from tui_agent.tools.wrappers import BRIDGE_STUB, FunctionSpec, package_sources

MANIFEST = "_manifest.json"
STUB = "tui_agent_bridge.pyi"
FILE_MODE = 0o644
FOLDER_MODE = 0o755


class GenerationError(UserError):
    """The packages could not be written (one line: where, why)."""


@dataclass(frozen=True)
class Generated:
    """One package after generation: its functions, and whether it was written this time."""

    server: ServerTools
    path: Path
    functions: tuple[FunctionSpec, ...]
    written: bool
    seconds: float


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _current(path: Path, files: dict[str, str]) -> bool:
    """Whether the folder `path` (not a link) holds exactly `files`, as regular files."""
    try:
        if path.is_symlink() or {entry.name for entry in path.iterdir()} != set(files):
            return False
        return all(_current_file(path / name, text) for name, text in files.items())
    except OSError:
        return False


def _current_file(path: Path, text: str) -> bool:
    """Whether `path` is a regular file (not a link) holding exactly `text`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as file:
        expected = text.encode()
        return stat.S_ISREG(os.fstat(fd).st_mode) and file.read(len(expected) + 1) == expected


def generate_package(server: ServerTools, out: Path) -> Generated:
    """`<out>/<stem>_tools`, written unless it is there already as it would be written."""
    began = time.perf_counter()
    specs, files = package_sources(server)
    path = out / server.package
    manifest = {
        "server": server.name,
        "package": server.package,
        "digest": server.digest(),
        "generator": GENERATOR_VERSION,
        "functions": [spec.signature() for spec in specs],
        "files": {name: _sha(text) for name, text in files.items()},
    }
    expected = {**files, MANIFEST: json.dumps(manifest, indent=2) + "\n"}
    written = False
    if not _current(path, expected):
        _swap_in(path, expected)
        written = True
    return Generated(server, path, tuple(specs), written, time.perf_counter() - began)


def generate_packages(servers: Sequence[ServerTools], out: Path) -> list[Generated]:
    """Every server's package in `out` (created if missing), plus the type stub of the
    kernel's bridge module that mypy reads for them."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        stub = out / STUB
        if not _current_file(stub, BRIDGE_STUB):
            _write(stub, BRIDGE_STUB)
        return [generate_package(server, out) for server in servers]
    except OSError as exc:
        where = exc.filename or out
        raise GenerationError(
            f"cannot write the tool packages in {out}: {exc.strerror or exc} ({where})"
        ) from exc


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _create(temporary, text)
    os.replace(temporary, path)


def _create(path: Path, text: str) -> None:
    """Write `text` to `path` (replacing a file there, never following a link), mode 0644."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        os.fchmod(fd, FILE_MODE)
        file.write(text)


def _swap_in(path: Path, files: dict[str, str]) -> None:
    """Write `files` as the folder `path`, replacing what was there in one rename."""
    fresh = path.with_name(f".{path.name}.{os.getpid()}.new")
    stale = path.with_name(f".{path.name}.{os.getpid()}.old")
    for leftover in (fresh, stale):
        shutil.rmtree(leftover, ignore_errors=True)
    fresh.mkdir(parents=True)
    os.chmod(fresh, FOLDER_MODE)
    for name, text in files.items():
        _create(fresh / name, text)
    if path.exists() or path.is_symlink():
        os.replace(path, stale)
    os.replace(fresh, path)
    shutil.rmtree(stale, ignore_errors=True)
