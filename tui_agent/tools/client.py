"""Connections to the configured MCP servers, on the official SDK (`mcp`).

Each server is held open by a task of its own, which enters and leaves the SDK's client in one
place however the rest of the program is cancelled. `ToolServers.start()` connects them all at
once and lists their tools; a server that cannot be reached is a ServerStartError with its
reason (for a command: the last line it wrote to stderr). `call()` returns a tool's output as
text, a tool error as text starting with "Error:"; a call that cannot complete (the server is
gone, or it did not answer in time) raises ToolCallFailure.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import IO, Any, Self

from tui_agent.errors import UserError
from tui_agent.tools.catalog import ServerTools, ToolInfo
from tui_agent.tools.config import HttpServer, McpConfig, ServerEntry
from tui_agent.tools.results import result_text

START_TIMEOUT = 30.0
CLOSE_TIMEOUT = 5.0
MAX_PAGES = 50
STDERR_TAIL = 2000


class ServerStartError(UserError):
    """An MCP server that could not be started, reached or listed (one line: which, why)."""


class ToolCallFailure(Exception):
    """A call that could not complete: the connection is gone, or the tool took too long."""


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    message = getattr(leaf, "message", None) or str(leaf) or type(leaf).__name__
    if isinstance(leaf, OSError) and leaf.strerror:
        message = f"{leaf.strerror}: {leaf.filename}" if leaf.filename else leaf.strerror
    return message.splitlines()[0] if message.strip() else type(leaf).__name__


class _Held:
    """One server's connection, opened, used and closed by its own task."""

    def __init__(self, entry: ServerEntry) -> None:
        self.entry = entry
        self.client: Any = None
        self.tools: ServerTools | None = None
        self.lost: str | None = None
        self._stderr: IO[str] | None = None
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self.task = asyncio.create_task(self._hold(), name=f"mcp-{entry.stem}")

    async def ready(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError:
            raise ServerStartError(
                f"MCP server {self.entry.name!r} ({self.entry.config.describe()}) did not "
                f"answer within {timeout:g} s"
            ) from None

    def last_words(self) -> str:
        """The last line the server wrote to stderr ("" for none or an HTTP server)."""
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0, 2)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL))
            lines = [line.strip() for line in self._stderr.read().splitlines() if line.strip()]
            return lines[-1] if lines else ""
        return ""

    async def close(self) -> None:
        self._closing.set()
        if not self.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.task), CLOSE_TIMEOUT)
            except TimeoutError:
                self.task.cancel()
                await asyncio.gather(self.task, return_exceptions=True)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _hold(self) -> None:
        try:
            async with self._connected() as client:
                self.client = client
                self.tools = await self._list(client)
                self._ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(self._start_error(exc))
            elif self.lost is None:
                self.lost = _describe(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.client = None

    @asynccontextmanager
    async def _connected(self) -> AsyncIterator[Any]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        config = self.entry.config
        async with AsyncExitStack() as stack:
            if isinstance(config, HttpServer):
                import httpx2

                http = httpx2.AsyncClient(
                    headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0)
                )
                stack.push_async_callback(http.aclose)
                transport = streamable_http_client(config.url, http_client=http)
            else:
                # kept open past this block for last_words(); closed in close()
                self._stderr = tempfile.TemporaryFile(  # noqa: SIM115
                    "w+", encoding="utf-8", errors="replace"
                )
                parameters = StdioServerParameters(
                    command=config.command, args=config.args, env=config.env, cwd=config.cwd
                )
                transport = stdio_client(parameters, errlog=self._stderr)
            client = await stack.enter_async_context(Client(transport))
            yield client

    async def _list(self, client: Any) -> ServerTools:
        tools: list[ToolInfo] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += [
                ToolInfo(t.name, t.description or "", dict(t.input_schema or {}))
                for t in page.tools
            ]
            cursor = page.next_cursor
            if cursor is None:
                break
        info = client.server_info
        title = getattr(info, "title", None) or getattr(info, "description", None) or ""
        instructions = client.instructions or ""
        return ServerTools(
            name=self.entry.name,
            stem=self.entry.stem,
            tools=tuple(tools),
            description=(instructions or title).strip(),
        )

    def _start_error(self, exc: BaseException) -> ServerStartError:
        entry = self.entry
        why = _describe(exc)
        words = self.last_words()
        if words and words not in why:
            why = f"{why}; its last words: {words}"
        return ServerStartError(
            f"MCP server {entry.name!r} ({entry.config.describe()}) did not start: {why}"
        )


class ToolServers:
    """The connected servers of a config: their tool lists, and calls to their tools."""

    def __init__(self, config: McpConfig, *, start_timeout: float = START_TIMEOUT) -> None:
        self.config = config
        self.start_timeout = start_timeout
        self._held: dict[str, _Held] = {}

    async def start(self) -> None:
        """Connect every server and list its tools; ServerStartError names the first that
        failed (the others are closed again)."""
        self._held = {entry.stem: _Held(entry) for entry in self.config.servers}
        results = await asyncio.gather(
            *(held.ready(self.start_timeout) for held in self._held.values()),
            return_exceptions=True,
        )
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            await self.close()
            raise failure

    @property
    def listings(self) -> tuple[ServerTools, ...]:
        """Each server's tools, in the config's order."""
        return tuple(held.tools for held in self._held.values() if held.tools is not None)

    def has(self, stem: str) -> bool:
        return stem in self._held

    async def call(self, stem: str, tool: str, arguments: dict[str, Any], timeout: float) -> str:
        """The output of `tool` on server `stem` ("Error: ..." when the tool failed);
        ToolCallFailure when the call cannot complete within `timeout` seconds."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        held = self._held[stem]
        name = held.entry.name
        if held.client is None or held.lost is not None:
            raise ToolCallFailure(f"MCP server {name!r} is gone ({held.lost or 'not connected'})")
        try:
            result = await held.client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolCallFailure(
                    f"{stem}.{tool} did not answer within {timeout:g} s"
                ) from None
            if exc.code != CONNECTION_CLOSED:
                return f"Error: {exc.message}"
            held.lost = "it closed the connection"
        except Exception as exc:
            held.lost = _describe(exc)
        else:
            return result_text(result)
        words = held.last_words()
        said = f"; its last words: {words}" if words else ""
        raise ToolCallFailure(
            f"MCP server {name!r} is gone: {held.lost} during {tool}{said}"
        ) from None

    async def close(self) -> None:
        held = list(self._held.values())
        await asyncio.gather(*(h.close() for h in held), return_exceptions=True)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
