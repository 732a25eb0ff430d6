"""What each app itself says a layout lists: its own export (Datasette's JSON, Trac's CSV,
the Django admin's ChangeList queryset) or, for Pelican's static site, its built pages. The
tests check the layouts' ground truth against these."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from html import unescape

import httpx

from corpus.apps import HERE, App
from corpus.layouts import Layout, Record


def exported(app: App, layout: Layout) -> list[Record]:
    """The records `app` lists at `layout.listed_at`, in its order, with the truth's fields."""
    rows = {
        "datasette": _datasette,
        "django": _django,
        "pelican": _pelican,
        "trac": _trac,
    }[app.name](app, layout.listed_at)
    fields = list(layout.truth[0])
    return [{f: row[f] for f in fields} for row in rows]


def _datasette(app: App, listed_at: str) -> list[Record]:
    path, _, query = listed_at.partition("?")
    url = f"{app.url}{path}.json?{query}&_shape=array&_size=max"
    rows = httpx.get(url).raise_for_status().json()
    return [{k: str(v) for k, v in row.items()} for row in rows]


def _trac(app: App, listed_at: str) -> list[Record]:
    text = httpx.get(f"{app.url}{listed_at}&format=csv&max=0").raise_for_status().text
    rows = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    return [{k.lower(): f"#{v}" if k == "id" else v for k, v in row.items()} for row in rows]


def _django(app: App, listed_at: str) -> list[Record]:
    query = listed_at.partition("?")[2]
    script = HERE / "export_django.py"
    out = subprocess.run(
        [sys.executable, str(script), str(app.folder), query],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    rows: list[Record] = json.loads(out.stdout)
    return rows


LISTED = re.compile(r'<h1(?: class="entry-title")?><a href="([^"]+\.html)"')
"""An article's link on a list page (the featured one first on page 1, then the others)."""
PERMALINK = re.compile(r'rel="bookmark"\s+title="Permalink to ([^"]*)"')
PUBLISHED = re.compile(r"Published: ([^<]+?)\s*</abbr>")
AUTHOR = re.compile(r'<a class="url fn" href="[^"]*">([^<]*)</a>')
CATEGORY = re.compile(r'<p>In <a href="[^"]*category/[^"]*">([^<]*)</a>')
TAG = re.compile(r'<a href="[^"]*tag/[^"]*">([^<]*)</a>')


def _pelican(app: App, listed_at: str) -> list[Record]:
    """Each article listed on `listed_at` and its next pages (`stem2.html`...), as its own
    page shows it."""
    stem = listed_at.removesuffix(".html")
    rows: list[Record] = []
    with httpx.Client(base_url=app.url) as client:
        for number in range(1, 100):
            page = client.get(f"{stem}{number if number > 1 else ''}.html")
            if page.status_code == 404:
                break
            for href in LISTED.findall(page.raise_for_status().text):
                link = str(httpx.URL(str(page.url)).join(href))
                rows.append(_article(client.get(link).raise_for_status().text))
    return rows


def _article(html: str) -> Record:
    article = html[html.index("<article") :]
    footer = article[: article.index("</footer>")]
    title = PERMALINK.search(article)
    published = PUBLISHED.search(footer)
    author = AUTHOR.search(footer)
    category = CATEGORY.search(footer)
    assert title and published and author and category, "an article page without its fields"
    return {
        "title": unescape(title.group(1)),
        "date": published.group(1).strip(),
        "author": unescape(author.group(1)),
        "category": unescape(category.group(1)),
        "tags": tuple(unescape(tag) for tag in TAG.findall(footer)),
    }
