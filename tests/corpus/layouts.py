"""The corpus's layouts: a start page on one app, a task naming the fields, and the ground
truth from the generated data (in page order, each value as the page shows it)."""

from __future__ import annotations

from dataclasses import dataclass

from corpus.data import PRIORITIES, Article, Book, Ticket, articles, books, tickets

Value = str | tuple[str, ...]
"""A field's value; a tuple for a field holding several (tags), in any order."""
Record = dict[str, Value]


@dataclass(frozen=True)
class Layout:
    """One scrape of the corpus: `task` on `app`'s page `path`, expecting `truth`."""

    app: str
    name: str
    path: str
    task: str
    truth: tuple[Record, ...]
    filtered: str = ""
    """The page listing exactly `truth`, when the task (not `path`) filters it."""

    @property
    def listed_at(self) -> str:
        """The path of the page (and its next pages) that lists `truth` in order."""
        return self.filtered or self.path

    @property
    def max_items(self) -> int:
        return len(self.truth)

    @property
    def key(self) -> str:
        return f"{self.app}-{self.name}"


def _book(b: Book, *fields: str, genre_label: bool = False) -> Record:
    shown: Record = {
        "title": b.title,
        "author": b.author,
        "genre": b.genre.capitalize() if genre_label else b.genre,
        "year": str(b.year),
        "rating": str(b.rating),
        "publisher": b.publisher,
    }
    return {f: shown[f] for f in fields}


def _article(a: Article, *fields: str) -> Record:
    shown: Record = {
        "title": a.title,
        "date": a.date.strftime("%a %d %B %Y"),
        "author": a.author,
        "category": a.category,
        "tags": a.tags,
    }
    return {f: shown[f] for f in fields}


def _ticket(t: Ticket, *fields: str) -> Record:
    shown: Record = {
        "id": f"#{t.id}",
        "summary": t.summary,
        "status": t.status,
        "owner": t.owner,
        "type": t.type,
        "priority": t.priority,
        "milestone": t.milestone,
    }
    return {f: shown[f] for f in fields}


def _datasette() -> list[Layout]:
    rows = books(60)  # serve_datasette.BOOKS
    fields = ("title", "author", "genre", "year", "rating")
    poetry = [b for b in rows if b.genre == "poetry"]
    moss = sorted((b for b in rows if b.author == "Ada Moss"), key=lambda b: -b.year)
    return [
        Layout(
            "datasette",
            "table",
            "/corpus/books",
            "Extract 20 books with title, author, genre, year and rating",
            tuple(_book(b, *fields) for b in rows[:20]),
        ),
        Layout(
            "datasette",
            "facet",
            "/corpus/books",
            "Extract 15 poetry books with title, author, year and rating",
            tuple(_book(b, "title", "author", "year", "rating") for b in poetry[:15]),
            filtered="/corpus/books?genre=poetry",
        ),
        Layout(
            "datasette",
            "search-sorted",
            "/corpus/books?_search=moss&_sort_desc=year",
            "Extract 12 books with title, author, genre and year",
            tuple(_book(b, "title", "author", "genre", "year") for b in moss),
        ),
    ]


def _django() -> list[Layout]:
    rows = sorted(books(45), key=lambda b: b.title)  # serve_django.BOOKS; ordering = title
    history = sorted((b for b in rows if b.genre == "history"), key=lambda b: -b.year)
    moss = [b for b in rows if b.author == "Ada Moss"]
    return [
        Layout(
            "django",
            "changelist",
            "/admin/catalog/book/",
            "Extract 20 books with title, author, genre and year",
            tuple(
                _book(b, "title", "author", "genre", "year", genre_label=True) for b in rows[:20]
            ),
        ),
        Layout(
            "django",
            "filtered-sorted",
            "/admin/catalog/book/?genre__exact=history&o=-3",
            "Extract 12 history books with title, author and year",
            tuple(_book(b, "title", "author", "year") for b in history[:12]),
        ),
        Layout(
            "django",
            "details",
            "/admin/catalog/book/?q=moss",
            "Extract 9 books with title, year and publisher (the publisher is on each book's page)",
            tuple(_book(b, "title", "year", "publisher") for b in moss),
        ),
    ]


def _pelican() -> list[Layout]:
    newest = sorted(articles(25), key=lambda a: a.date, reverse=True)  # serve_pelican.ARTICLES
    travel = [a for a in newest if a.category == "Travel"]
    return [
        Layout(
            "pelican",
            "index",
            "/index.html",
            "Extract 15 articles with title, date, author, category and tags",
            tuple(_article(a, "title", "date", "author", "category", "tags") for a in newest[:15]),
        ),
        Layout(
            "pelican",
            "category",
            "/category/travel.html",
            "Extract 8 articles with title, date, author and tags",
            tuple(_article(a, "title", "date", "author", "tags") for a in travel),
        ),
    ]


def _trac() -> list[Layout]:
    rows = [t for t in tickets(45) if t.status != "closed"]  # serve_trac.TICKETS
    dans = sorted((t for t in rows if t.owner == "dan"), key=lambda t: PRIORITIES.index(t.priority))
    fields = ("id", "summary", "status", "owner", "type", "priority", "milestone")
    return [
        Layout(
            "trac",
            "query",
            "/query?status=!closed&order=id",
            "Extract 15 tickets with id, summary, status, owner, type, priority and milestone",
            tuple(_ticket(t, *fields) for t in rows[:15]),
        ),
        Layout(
            "trac",
            "filtered-sorted",
            "/query?status=!closed&owner=dan&order=priority",
            "Extract 11 tickets with id, summary, type, priority and milestone",
            tuple(_ticket(t, "id", "summary", "type", "priority", "milestone") for t in dans),
        ),
    ]


LAYOUTS: tuple[Layout, ...] = (*_datasette(), *_django(), *_pelican(), *_trac())
"""Every layout, by app."""


def layouts_of(apps: tuple[str, ...]) -> list[Layout]:
    return [layout for layout in LAYOUTS if layout.app in apps]
