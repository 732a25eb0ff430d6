"""The corpus of real web software: each app serves its generated data on loopback only, the
layouts' ground truth is what the app itself lists, and the offline planner's scrape of each
layout reaches it (items and field recall ≥ 95 %)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.requirements import require_chromium

from corpus.apps import APPS
from corpus.crawl import crawl, listening
from corpus.exports import exported
from corpus.layouts import LAYOUTS, Layout
from corpus.offsite import offsite_urls
from corpus.run import scrape

# --- the apps and their ground truth ---------------------------------------------------------


@pytest.mark.parametrize("name", APPS)
def test_an_app_listens_on_loopback_only(corpus_app, name):
    app = corpus_app(name)
    port = int(app.url.rsplit(":", 1)[1])
    assert listening(app.pid) == {("127.0.0.1", port)}


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.key)
def test_the_ground_truth_is_what_the_app_lists(corpus_app, layout: Layout):
    listed = exported(corpus_app(layout.app), layout)
    assert listed[: layout.max_items] == list(layout.truth)


ITEM_PAGES = {
    "datasette": "/corpus/books/1",
    "django": "/admin/catalog/book/1/change/",
    "pelican": "/notes-on-gardens-part-1.html",
    "trac": "/ticket/1",
}


@pytest.mark.parametrize("name", APPS)
def test_no_served_page_addresses_a_host_beyond_loopback(corpus_app, name):
    app = corpus_app(name)
    starts = [ITEM_PAGES[name], *(layout.listed_at for layout in LAYOUTS if layout.app == name)]
    pages = dict(crawl(app.url, starts))
    assert len(pages) >= 8  # list pages, next pages, item pages, stylesheets
    assert {url: offsite_urls(body) for url, body in pages.items() if offsite_urls(body)} == {}


# --- the offline planner on each layout ------------------------------------------------------


@pytest.mark.chromium
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.key)
async def test_the_offline_planner_reaches_the_truth(corpus_app, tmp_path: Path, layout: Layout):
    require_chromium()
    run = await scrape(layout, corpus_app(layout.app).url, tmp_path)
    assert run.traffic.passed > 0  # the guard saw the browser's requests
    assert run.traffic.blocked == []  # and none was beyond loopback
    assert run.status == "completed", run.error
    score = run.score
    found = f"{score.found}/{score.expected} items, recall {score.recall:.1%}"
    assert score.items >= 0.95 and score.recall >= 0.95, f"{found}: {score.miss_summary()}"
