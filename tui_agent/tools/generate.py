"""Writing the generated packages to a folder, only when a server's tool list changed.

Each package keeps a `_manifest.json` with the hash of the tool list it was written from (see
`ServerTools.digest`) and the hash of each file. A package is written again when the tool list
changed, or when a file no longer matches its hash (edited, or removed); else it is left alone.
A package is written beside the old one and then swapped in, so a reader never sees half of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_agent.errors import UserError
from tui_agent.tools.catalog import GENERATOR_VERSION, ServerTools
from tui_agent.tools.wrappers import BRIDGE_STUB, FunctionSpec, package_sources

MANIFEST = "_manifest.json"
STUB = "tui_agent_bridge.pyi"


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


def _current(path: Path, digest: str) -> bool:
    """Whether the package at `path` was written from `digest` and is unchanged since."""
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("digest") != digest:
            return False
        files = manifest["files"]
        present = {p.name for p in path.iterdir() if p.suffix == ".py"}
        if present != set(files):
            return False
        return all(_sha((path / n).read_text(encoding="utf-8")) == h for n, h in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def generate_package(server: ServerTools, out: Path) -> Generated:
    """`<out>/<stem>_tools`, written only when `server`'s tool list changed."""
    began = time.perf_counter()
    specs, files = package_sources(server)
    path = out / server.package
    digest = server.digest()
    written = False
    if not _current(path, digest):
        manifest = {
            "server": server.name,
            "package": server.package,
            "digest": digest,
            "generator": GENERATOR_VERSION,
            "functions": [spec.signature() for spec in specs],
            "files": {name: _sha(text) for name, text in files.items()},
        }
        _swap_in(path, {**files, MANIFEST: json.dumps(manifest, indent=2) + "\n"})
        written = True
    return Generated(server, path, tuple(specs), written, time.perf_counter() - began)


def generate_packages(servers: Sequence[ServerTools], out: Path) -> list[Generated]:
    """Every server's package in `out` (created if missing), plus the type stub of the
    runner's bridge module that mypy reads for them."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        stub = out / STUB
        if not stub.is_file() or stub.read_text(encoding="utf-8") != BRIDGE_STUB:
            _write(stub, BRIDGE_STUB)
        return [generate_package(server, out) for server in servers]
    except OSError as exc:
        where = exc.filename or out
        raise GenerationError(
            f"cannot write the tool packages in {out}: {exc.strerror or exc} ({where})"
        ) from exc


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _swap_in(path: Path, files: dict[str, str]) -> None:
    """Write `files` as the folder `path`, replacing what was there in one rename."""
    fresh = path.with_name(f".{path.name}.{os.getpid()}.new")
    stale = path.with_name(f".{path.name}.{os.getpid()}.old")
    for leftover in (fresh, stale):
        shutil.rmtree(leftover, ignore_errors=True)
    fresh.mkdir(parents=True)
    for name, text in files.items():
        (fresh / name).write_text(text, encoding="utf-8")
    if path.exists() or path.is_symlink():
        os.replace(path, stale)
    os.replace(fresh, path)
    shutil.rmtree(stale, ignore_errors=True)
