"""The generated records every corpus app serves: deterministic, no randomness.

Imported by the server scripts (as `data`) and by the layouts' ground truth (as `corpus.data`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ADJECTIVES = ("Silent", "Golden", "Hidden", "Broken", "Distant", "Quiet", "Burning")
NOUNS = (
    "River", "Garden", "Mountain", "Harbor", "Forest", "Letter",
    "Island", "Winter", "Mirror", "Road", "Lantern",
)  # fmt: skip
AUTHORS = ("Ada Moss", "Ben Carter", "Cara Lind", "Dan Hale", "Eve Stone")
GENRES = ("fiction", "poetry", "history")
PUBLISHERS = ("Northwind Press", "Harbor House", "Blue Door Books", "Kestrel & Sons")


@dataclass(frozen=True)
class Book:
    """A row of Datasette's table and of Django's changelist."""

    id: int
    title: str
    author: str
    genre: str
    year: int
    rating: float
    publisher: str


def books(count: int) -> list[Book]:
    """`count` (at most 77) books with unique titles and years, in id order."""
    return [
        Book(
            id=i,
            title=f"The {ADJECTIVES[i % 7]} {NOUNS[i % 11]}",
            author=AUTHORS[(i * 3) % 5],
            genre=GENRES[i % 3],
            year=1900 + (i * 37) % 100,
            rating=round(1 + ((i * 13) % 41) / 10, 1),
            publisher=PUBLISHERS[(i * 5) % 4],
        )
        for i in range(1, count + 1)
    ]


CATEGORIES = ("Travel", "Code", "Food")
TAGS = ("maps", "python", "trains", "bread", "ideas", "notes")


@dataclass(frozen=True)
class Article:
    """A Pelican article."""

    number: int
    title: str
    date: datetime
    author: str
    category: str
    tags: tuple[str, ...]
    summary: str


def articles(count: int) -> list[Article]:
    """`count` articles, one a day from 2 January 2024 (unique dates), in number order."""
    return [
        Article(
            number=i,
            title=f"Notes on {NOUNS[i % 11].lower()}s, part {i}",
            date=datetime(2024, 1, 1, 9, 30) + timedelta(days=i),
            author=AUTHORS[(i // 2) % 5],
            category=CATEGORIES[i % 3],
            tags=tuple(TAGS[(i + k * (1 + i % 2)) % 6] for k in range(2 + i % 2)),
            summary=f"A short summary of article {i}.",
        )
        for i in range(1, count + 1)
    ]


PRIORITIES = ("blocker", "critical", "major", "minor", "trivial")
"""Trac's default priority enum, in its order."""
STATUSES = ("new", "assigned", "accepted", "closed")
OWNERS = ("ada", "dan", "eve")
TYPES = ("defect", "enhancement", "task")
KEYWORDS = ("ui", "db", "perf", "docs", "api")


@dataclass(frozen=True)
class Ticket:
    """A Trac ticket (ids are given in insertion order, from 1)."""

    id: int
    summary: str
    owner: str
    type: str
    priority: str
    milestone: str
    status: str
    keywords: tuple[str, ...]
    created: datetime


def tickets(count: int) -> list[Ticket]:
    """`count` tickets, one created a day from 2 January 2024, in id order."""
    actions = ("fix", "document", "speed up", "test", "rework")
    return [
        Ticket(
            id=i,
            summary=f"{actions[i % 5].capitalize()} the {NOUNS[i % 11].lower()} view ({i})",
            owner=OWNERS[(i * 2) % 3],
            type=TYPES[i % 3],
            priority=PRIORITIES[(i * 3) % 5],
            milestone=f"milestone{1 + i % 2}",
            status=STATUSES[(i * 7) % 4] if i % 9 else "closed",
            keywords=(KEYWORDS[i % 5], KEYWORDS[(i + 2) % 5]),
            created=datetime(2024, 1, 1, 12, tzinfo=UTC) + timedelta(days=i),
        )
        for i in range(1, count + 1)
    ]
