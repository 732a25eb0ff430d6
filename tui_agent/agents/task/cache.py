"""Not paying twice for the same task: finding cached code for a task and a context.

An exact hit needs the same normalised task text, the same context schema (keys and value
types, never values) and the same model. Among entries of that schema and model, a task worded
otherwise hits when `similarity.best_match` says it is the same task. The store keeps the
entries (`tui_agent.store.task_cache`); this module only knows the `CodeCache` port.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tui_agent.agents.task.context import context_schema, schema_hash
from tui_agent.agents.task.similarity import best_match, normalise_task


class CachedCode(Protocol):
    """One cache entry, as the executor reads it."""

    @property
    def key(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def task_code(self) -> str: ...
    @property
    def analysis_code(self) -> str | None: ...


class CodeCache(Protocol):
    """Where generated code is kept between runs."""

    async def get(self, key: str) -> CachedCode | None: ...

    async def candidates(self, schema_hash: str, model: str) -> Sequence[CachedCode]: ...

    async def put(
        self,
        *,
        key: str,
        task: str,
        normalised_task: str,
        schema_hash: str,
        schema_json: str,
        model: str,
        task_code: str,
        analysis_code: str | None,
        session_id: str,
    ) -> None: ...

    async def used(self, key: str) -> None: ...

    async def remove(self, key: str) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class CacheKey:
    """What a task's code is cached under."""

    task: str
    normalised_task: str
    schema: dict[str, Any]
    schema_hash: str
    model: str

    @property
    def key(self) -> str:
        text = "\0".join((self.normalised_task, self.schema_hash, self.model))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def schema_json(self) -> str:
        return json.dumps(self.schema, sort_keys=True)

    @classmethod
    def of(cls, task: str, context: dict[str, Any], model: str) -> CacheKey:
        schema = context_schema(context)
        return cls(task, normalise_task(task), schema, schema_hash(schema), model)


@dataclass(frozen=True)
class CacheHit:
    """Cached code found for a task: how it matched, and why when by meaning."""

    entry: CachedCode
    match: Literal["exact", "semantic"]
    score: float = 100.0
    why: str = ""


async def find(cache: CodeCache, key: CacheKey) -> CacheHit | None:
    """The cached code for `key`: its exact entry, else one that words the same task otherwise."""
    entry = await cache.get(key.key)
    if entry is not None:
        return CacheHit(entry, "exact")
    candidates = list(await cache.candidates(key.schema_hash, key.model))
    match = best_match(key.task, [candidate.task for candidate in candidates])
    if match is None:
        return None
    return CacheHit(candidates[match.index], "semantic", match.score, match.why)


async def store(
    cache: CodeCache, key: CacheKey, task_code: str, analysis_code: str | None, session_id: str
) -> None:
    """Keep the code that completed the task under `key` (replacing what was there)."""
    await cache.put(
        key=key.key,
        task=key.task,
        normalised_task=key.normalised_task,
        schema_hash=key.schema_hash,
        schema_json=key.schema_json,
        model=key.model,
        task_code=task_code,
        analysis_code=analysis_code,
        session_id=session_id,
    )
