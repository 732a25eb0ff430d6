"""Trac on 127.0.0.1 (a free port): the generated tickets behind a ticket query (10 a page,
absolute ISO dates) and their ticket pages, readable anonymously. Usage: python serve_trac.py DIR"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import serving
from data import tickets

TICKETS = 45
OPTIONS = [
    ("project", "name", "Corpus"),
    ("trac", "database", "sqlite:db/trac.db"),
    ("trac", "default_dateinfo_format", "absolute"),
    ("trac", "default_date_format", "iso8601"),
    ("trac", "default_timezone", "UTC"),
    ("header_logo", "src", ""),
    ("query", "items_per_page", "10"),
    ("logging", "log_type", "none"),
]


def build(path: Path) -> None:
    """The environment with its tickets."""
    from trac.env import Environment
    from trac.ticket.model import Ticket

    env = Environment(str(path), create=True, options=OPTIONS)
    with env.db_transaction:
        for t in tickets(TICKETS):
            ticket = Ticket(env)
            ticket.populate(
                {
                    "summary": t.summary,
                    "reporter": "ada",
                    "owner": t.owner,
                    "type": t.type,
                    "priority": t.priority,
                    "component": "component1",
                    "milestone": t.milestone,
                    "keywords": " ".join(t.keywords),
                    "status": t.status,
                    "resolution": "fixed" if t.status == "closed" else "",
                    "description": f"The description of ticket {t.id}.",
                }
            )
            ticket.insert(when=t.created)
    env.shutdown()


def main(folder: Path) -> None:
    from trac.web.main import dispatch_request

    path = folder / "trac"
    build(path)

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        environ["trac.env_path"] = str(path)
        return dispatch_request(environ, start_response)

    serving.serve_wsgi(app)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
