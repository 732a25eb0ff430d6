"""A small site on loopback for the form and item-page tests (served by `FormsSite`).

- `/quotes`: quotes, each with its author and an "(about)" link to the author's page
  (`/author/<slug>`, with the birth date), and tag links.
- `/search`: a POST form whose author select sends the form on change (the page comes back
  with the tag select filled for that author); the tag select and a Search button then show
  the quotes of that author with that tag. No list before.
- `/find`: a GET form with one text input; the books whose title holds the words, each linking
  to its own page (its publisher labelled "Publisher:" there). No list before.
"""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlparse

AUTHORS = {
    "albert-einstein": ("Albert Einstein", "March 14, 1879"),
    "jane-austen": ("Jane Austen", "December 16, 1775"),
    "mark-twain": ("Mark Twain", "November 30, 1835"),
}
QUOTES = [
    ("The world as we have created it is a process of our thinking.", "albert-einstein",
     ["change", "thinking", "world"]),
    ("It is our choices that show what we truly are.", "jane-austen", ["choices"]),
    ("There are only two ways to live your life.", "albert-einstein", ["life", "miracles"]),
    ("The person who does not enjoy a good novel must be stupid.", "jane-austen",
     ["books", "humor"]),
    ("Imagination is more important than knowledge.", "albert-einstein", ["change", "knowledge"]),
    ("The secret of getting ahead is getting started.", "mark-twain", ["change", "success"]),
    ("Life is like riding a bicycle: to keep your balance you must keep moving.",
     "albert-einstein", ["change", "life"]),
    ("If you judge a fish by its ability to climb a tree, it will believe it is stupid.",
     "albert-einstein", ["genius"]),
]  # fmt: skip
BOOKS = [
    ("River of Stars", "1999", "Harbor House"),
    ("The Glass Garden", "2004", "Blue Door Books"),
    ("Down the River", "2011", "North Press"),
    ("Maps of Winter", "1987", "Harbor House"),
    ("River Songs", "2020", "Lark & Finch"),
]


def _page(title: str, body: str) -> bytes:
    text = f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
    return text.encode()


def quote_html(index: int, *, linked: bool = True) -> str:
    text, slug, tags = QUOTES[index]
    name = AUTHORS[slug][0]
    about = f' <a href="/author/{slug}">(about)</a>' if linked else ""
    tag_links = " ".join(f'<a class="tag" href="/tag/{tag}">{tag}</a>' for tag in tags)
    return (
        f'<div class="quote"><span class="text">{html.escape(text)}</span>'
        f'<span>by <small class="author">{name}</small>{about}</span>'
        f'<div class="tags">Tags: {tag_links}</div></div>'
    )


def search_matches(author: str, tag: str) -> list[int]:
    """The quotes the search form shows for an author's name and a tag."""
    return [
        index
        for index, (_, slug, tags) in enumerate(QUOTES)
        if AUTHORS[slug][0] == author and tag in tags
    ]


def find_matches(words: str) -> list[int]:
    """The books the find form shows: every word in the title, any case."""
    wanted = words.lower().split()
    return [i for i, (title, *_) in enumerate(BOOKS) if all(w in title.lower() for w in wanted)]


def _options(values: list[str], chosen: str) -> str:
    options = ['<option value="">----------</option>']
    for value in values:
        selected = " selected" if value == chosen else ""
        options.append(f'<option value="{html.escape(value)}"{selected}>{value}</option>')
    return "".join(options)


def _search(form: dict[str, str]) -> bytes:
    author, tag = form.get("author", ""), form.get("tag", "")
    names = sorted(name for name, _ in AUTHORS.values())
    tags = sorted({t for _, slug, ts in QUOTES if AUTHORS[slug][0] == author for t in ts})
    results = ""
    if "submit_button" in form and author and tag:
        shown = "".join(quote_html(i, linked=False) for i in search_matches(author, tag))
        results = f'<div class="results">{shown}</div>'
    body = (
        '<h1>Search quotes</h1><form id="search" method="post" action="/search">'
        f'<label>Author <select id="author" name="author" onchange="this.form.submit()">'
        f"{_options(names, author)}</select></label>"
        f'<label>Tag <select id="tag" name="tag">{_options(tags, tag)}</select></label>'
        '<input type="submit" name="submit_button" value="Search"></form>' + results
    )
    return _page("Search", body)


def _find(query: dict[str, list[str]]) -> bytes:
    words = query.get("q", [""])[0]
    results = ""
    if words:
        rows = "".join(
            f'<li class="book"><a href="/book/{i}">{BOOKS[i][0]}</a> '
            f'<span class="year">{BOOKS[i][1]}</span></li>'
            for i in find_matches(words)
        )
        results = f'<ul class="books">{rows}</ul>'
    body = (
        '<h1>Find a book</h1><form action="/find" method="get">'
        f'<input type="text" name="q" placeholder="Title words" value="{html.escape(words)}">'
        f'<button type="submit">Go</button></form>{results}'
    )
    return _page("Find", body)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, body: bytes, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")
        if url.path == "/quotes":
            listing = "".join(quote_html(i) for i in range(len(QUOTES)))
            self._send(_page("Quotes", f"<h1>Quotes</h1><div class='col'>{listing}</div>"))
        elif parts[0] == "author" and len(parts) == 2 and parts[1] in AUTHORS:
            name, born = AUTHORS[parts[1]]
            self._send(
                _page(
                    name,
                    f'<div class="author-details"><h3 class="author-title">{name}</h3>'
                    f'<p><strong>Born:</strong> <span class="author-born-date">{born}</span></p>'
                    f'<div class="author-description">{name} wrote many things.</div></div>',
                )
            )
        elif url.path == "/search":
            self._send(_search({}))
        elif url.path == "/find":
            self._send(_find(parse_qs(url.query)))
        elif parts[0] == "book" and len(parts) == 2 and parts[1].isdigit():
            title, year, publisher = BOOKS[int(parts[1])]
            body = (
                f'<article><h1 class="book-title">{title}</h1><p class="published">{year}</p>'
                '<div class="form-row field-publisher"><div><label>Publisher:</label>'
                f'<div class="readonly">{html.escape(publisher)}</div></div></div></article>'
            )
            self._send(_page(title, body))
        else:
            self._send(_page("Not found", "<p>Not found</p>"), 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        self._send(_search(form))


class FormsSite:
    """The site on 127.0.0.1 (a free port) while in a `with` block: `url("/quotes")`."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> FormsSite:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
