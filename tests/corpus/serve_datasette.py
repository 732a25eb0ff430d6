"""Datasette on 127.0.0.1 (a free port): the generated books, with facets, sortable columns,
full-text search and pages of 10. Usage: python serve_datasette.py DIR"""

from __future__ import annotations

import socket
import sqlite3
import sys
import threading
import time
from pathlib import Path

import offsite
import serving
from data import books

BOOKS = 60
METADATA = {
    "databases": {
        "corpus": {
            "tables": {
                "books": {
                    "facets": ["genre", "author"],
                    "sortable_columns": ["title", "author", "year", "rating"],
                    "fts_table": "books_fts",
                }
            }
        }
    }
}


def build(path: Path) -> None:
    """The SQLite database `corpus` with `books` and its FTS5 index."""
    db = sqlite3.connect(path)
    db.execute(
        "create table books (id integer primary key, title text, author text,"
        " genre text, year integer, rating real)"
    )
    db.executemany(
        "insert into books values (?, ?, ?, ?, ?, ?)",
        [(b.id, b.title, b.author, b.genre, b.year, b.rating) for b in books(BOOKS)],
    )
    db.executescript(
        "create virtual table books_fts using fts5(title, author, content='books',"
        " content_rowid='id');"
        "insert into books_fts(rowid, title, author) select id, title, author from books;"
    )
    db.commit()
    db.close()


def main(folder: Path) -> None:
    import uvicorn
    from datasette.app import Datasette

    path = folder / "corpus.db"
    build(path)
    datasette = Datasette(files=[str(path)], metadata=METADATA, settings={"default_page_size": 10})
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(offsite.asgi(datasette.app()), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    serving.announce(sock.getsockname()[1])
    thread.join()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
