"""The demo site's HTTP server: stdlib, loopback only, one background thread."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tui_agent.demo_site import data, pages
from tui_agent.demo_site.markup import api_record

STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
SCRIPT_LAYOUTS = ("infinite", "loadmore", "slow")
"""Layouts whose lists come from /api/products?layout=...&offset=...&limit=..."""


def _static(name: str) -> bytes | None:
    """A file of the package's static/ folder (nothing outside it)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    resource = files("tui_agent.demo_site").joinpath("static", name)
    return resource.read_bytes() if resource.is_file() else None


class Handler(BaseHTTPRequestHandler):
    """GET only: layout pages, product pages, the JSON API and the static files."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 10
    server_version = "DemoMarket/1.0"

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        path = parts.path.rstrip("/") or "/"
        try:
            self._route(path, query)
        except data.DemoSiteError as exc:
            if path.startswith("/api/"):
                self._send(400, "application/json", json.dumps({"error": str(exc)}).encode())
            else:
                self._html(400, pages.error_page(400, str(exc)))

    def _route(self, path: str, query: dict[str, str]) -> None:
        name = path.removeprefix("/")
        product = data.BY_SLUG.get(path.rpartition("/")[2])
        if path == "/":
            self._html(200, pages.home_page())
        elif name in data.LAYOUTS:
            known = {k: v for k, v in query.items() if k in data.QUERY_KEYS.get(name, ())}
            self._html(200, pages.layout_page(name, known))
        elif path == "/help":
            self._html(200, pages.help_page())
        elif product and path == product.path:
            self._html(200, pages.product_page(product))
        elif product and path == f"/es/productos/{product.slug}":
            self._html(200, pages.spanish_product_page(product))
        elif product and path == data.prose_path(product):
            self._html(200, pages.prose_product_page(product))
        elif path == "/api/late":
            time.sleep(data.LATE_API_DELAY_MS / 1000)
            self._json({"items": [api_record(p, "late") for p in data.listing("late")]})
        elif path == "/api/products":
            self._json(self._batch(query))
        elif product and path == f"/api{product.path}":
            self._json(api_record(product, data.check_layout(query.get("layout", "panel"))))
        elif path.startswith("/static/") and (body := _static(name.removeprefix("static/"))):
            suffix = name[name.rfind(".") :]
            self._send(200, STATIC_TYPES.get(suffix, "application/octet-stream"), body)
        else:
            self._html(404, pages.error_page(404, f"No page at {path}"))

    @staticmethod
    def _batch(query: dict[str, str]) -> dict[str, Any]:
        layout = query.get("layout", "")
        if layout not in SCRIPT_LAYOUTS:
            raise data.DemoSiteError(f"layout must be one of {', '.join(SCRIPT_LAYOUTS)}")
        offset, limit = query.get("offset", "0"), query.get("limit", str(data.BATCH_SIZE))
        if not (offset.isdigit() and limit.isdigit()):
            raise data.DemoSiteError("offset and limit must be whole numbers")
        products = data.listing(layout)
        start, stop = int(offset), int(offset) + int(limit)
        return {
            "items": [api_record(p, layout) for p in products[start:stop]],
            "total": len(products),
            "next_offset": stop if stop < len(products) else None,
        }

    def _html(self, status: int, page: str) -> None:
        self._send(status, "text/html; charset=utf-8", page.encode())

    def _json(self, value: Any) -> None:
        self._send(200, "application/json", json.dumps(value, ensure_ascii=False).encode())

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no access log."""


class QuietServer(ThreadingHTTPServer):
    """Prints nothing, and can cut its open keep-alive connections when it stops."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, Handler)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser dropping a connection is normal; nothing to print."""


class DemoSite:
    """The demo shop on 127.0.0.1 (`with DemoSite() as site: site.url("panel")`)."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port
        self._server: QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """E.g. "http://127.0.0.1:41234" (no trailing slash); only while running."""
        if self._server is None:
            raise RuntimeError("the demo site is not running (use start() or `with`)")
        return f"http://{self.host}:{self._server.server_address[1]}"

    def url(self, layout: str, **query: str | int) -> str:
        """The URL of `layout` with `query` (e.g. url("filter", category="home", q="oak"))."""
        data.check_layout(layout)
        suffix = f"?{urlencode(query)}" if query else ""
        return f"{self.base_url}/{layout}{suffix}"

    def layout_urls(self) -> dict[str, str]:
        return {layout: self.url(layout) for layout in data.LAYOUTS}

    def ground_truth(self, layout: str, **query: str | int) -> list[dict[str, Any]]:
        """data.ground_truth with absolute `url` values (as `element.href` gives them)."""
        return data.ground_truth(layout, base_url=self.base_url, **query)

    def start(self) -> DemoSite:
        """Bind (OSError if the port is taken) and serve in a daemon thread."""
        self._server = QuietServer((self.host, self.port))
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="demo-site", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> DemoSite:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


WAKE_SECONDS = 0.2
"""How often `serve`'s main thread wakes to see a Ctrl+C (a signal another thread took)."""


def serve(port: int = 0, announce: Callable[[str], None] = print) -> None:
    """Run the demo site until Ctrl+C, announcing the base URL and each layout's URL.

    Ctrl+C stops it even when it was started with SIGINT ignored, which Python then leaves
    ignored: a script's `tui-agent demo-site &` (a background job without job control)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with DemoSite(port) as site:
        announce(f"Demo site at {site.base_url}/ (Ctrl+C to stop)")
        for layout, url in site.layout_urls().items():
            announce(f"  {layout:<11} {url}")
        try:
            while True:  # short sleeps: the kernel may hand Ctrl+C to a server thread, and the
                time.sleep(WAKE_SECONDS)  # main thread only raises it once it wakes
        except KeyboardInterrupt:
            announce("Demo site stopped.")
