"""What every corpus server script does last: announce its port, serve until SIGTERM.

Imported by the scripts as `serving` (they run with this folder first on sys.path).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

import offsite


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


class _Threaded(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def announce(port: int) -> None:
    """The one line the launcher waits for. SIGTERM then exits at once (nothing to keep: the
    launcher removes the data folder), and so does the end of stdin: the launcher gone, even
    killed, leaves no server behind."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    print(json.dumps({"port": port}), flush=True)


def serve_wsgi(app: Callable[..., Iterable[bytes]]) -> None:
    """Serve `app` (its HTML pointed at loopback only) on 127.0.0.1, a free port."""
    server = _Threaded(("127.0.0.1", 0), _Quiet)
    server.set_app(offsite.wsgi(app))
    announce(server.server_address[1])
    server.serve_forever()
