"""A Pelican blog (default theme) built from the generated articles and served from
127.0.0.1 (a free port): an index of 5 a page, article, tag and category pages.
Usage: python serve_pelican.py DIR"""

from __future__ import annotations

import logging
import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import offsite
import serving
from data import articles

ARTICLES = 25
NO_FEEDS = dict.fromkeys(
    ("FEED_ALL_ATOM", "CATEGORY_FEED_ATOM", "TRANSLATION_FEED_ATOM", "AUTHOR_FEED_ATOM",
     "AUTHOR_FEED_RSS"),
)  # fmt: skip


def write_articles(content: Path) -> None:
    content.mkdir(parents=True)
    for a in articles(ARTICLES):
        (content / f"article-{a.number:02d}.md").write_text(
            f"Title: {a.title}\nDate: {a.date:%Y-%m-%d %H:%M}\nCategory: {a.category}\n"
            f"Tags: {', '.join(a.tags)}\nAuthor: {a.author}\nSummary: {a.summary}\n\n"
            f"The body of article {a.number}.\n"
        )


def build(content: Path, output: Path) -> None:
    """The site, its HTML and CSS pointed at loopback only."""
    from pelican import Pelican
    from pelican.settings import read_settings

    logging.disable(logging.WARNING)
    settings = read_settings(
        None,
        override={
            "PATH": str(content),
            "OUTPUT_PATH": str(output),
            "SITENAME": "Corpus blog",
            "DEFAULT_PAGINATION": 5,
            "RELATIVE_URLS": True,
            "TIMEZONE": "UTC",
            "LOCALE": ("C",),
            "LINKS": (),
            "SOCIAL": (),
            **NO_FEEDS,
        },
    )
    Pelican(settings).run()
    for page in [*output.rglob("*.html"), *output.rglob("*.css")]:
        page.write_text(offsite.to_loopback(page.read_text("utf-8")), "utf-8")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


def main(folder: Path) -> None:
    output = folder / "output"
    write_articles(folder / "content")
    build(folder / "content", output)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(output)))
    serving.announce(server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
