"""Every absolute URL to a host beyond loopback, pointed at a loopback path instead.

The apps' pages link outside (datasette.io, getpelican.com, trac.edgewall.org...): each served
HTML page and stylesheet has such URLs rewritten to `/_offsite/<host>/<path>` on its own server
(a 404), so nothing a browser does there can address another host. Imported by the server
scripts (as `offsite`) and by the tests (as `corpus.offsite`), which check no such URL remains.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

PREFIX = "/_offsite/"
LOOPBACK = r"(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])(?![\w.-])"
OFFSITE = re.compile(
    rf"""(?:\bhttps?:|(?<=["'(=\s]))//(?!{LOOPBACK})(?=[\w-]+(?:\.[\w-]+)*\.[a-z]{{2,}})""",
    re.IGNORECASE,
)
"""`http://host`, `https://host` or a quoted `//host`, host a domain name beyond loopback."""
URL_END = re.compile(r"""[\s"'<>)]""")
NAMESPACE = re.compile(r"""xmlns(?::\w+)?=["']$""")
"""An XML namespace's name (`xmlns="http://www.w3.org/2000/svg"`) is an identifier, never
fetched: left as it is (a browser needs it to draw inline SVG)."""


def offsite_urls(html: str) -> list[str]:
    """The absolute URLs in `html` that address a host beyond loopback."""
    return [
        URL_END.split(html[match.start() :], maxsplit=1)[0]
        for match in OFFSITE.finditer(html)
        if not NAMESPACE.search(html[max(0, match.start() - 12) : match.start()])
    ]


def to_loopback(html: str) -> str:
    """`html` with each URL `offsite_urls` would list pointed at PREFIX on the same server."""

    def replace(match: re.Match[str]) -> str:
        before = html[max(0, match.start() - 12) : match.start()]
        return match.group(0) if NAMESPACE.search(before) else PREFIX

    return OFFSITE.sub(replace, html)


def _rewritten(headers: Iterable[tuple[str, str]]) -> bool:
    """HTML and CSS are rewritten (what a page loads or links); scripts and images are not."""
    return any(
        k.lower() == "content-type" and ("html" in v.lower() or "css" in v.lower())
        for k, v in headers
    )


def wsgi(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """A WSGI app serving `app`'s HTML and CSS through `to_loopback`."""

    def rewritten(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        seen: dict[str, Any] = {}

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            seen.update(status=status, headers=headers, exc_info=exc_info)
            return lambda data: seen.setdefault("early", []).append(data)

        result = app(environ, start)
        try:
            body = b"".join([*seen.get("early", []), *result])
        finally:
            getattr(result, "close", lambda: None)()
        headers = seen["headers"]
        if _rewritten(headers):
            body = to_loopback(body.decode("utf-8")).encode("utf-8")
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            headers.append(("Content-Length", str(len(body))))
        start_response(seen["status"], headers, seen["exc_info"])
        return [body]

    return rewritten


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


def asgi(app: ASGIApp) -> ASGIApp:
    """An ASGI app serving `app`'s HTML and CSS through `to_loopback`."""

    async def rewritten(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def buffered(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
                ]
                if not _rewritten(headers):
                    await send(message)  # passed through as it comes (CSV streams, files)
                    return
                start.update(message)
                return
            if not start:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = to_loopback(b"".join(chunks).decode("utf-8")).encode("utf-8")
            kept = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            kept.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": kept})
            await send({"type": "http.response.body", "body": body})

        await app(scope, receive, buffered)

    return rewritten
