"""find_lists in real Chromium: the product list on every demo layout, and generic pages."""

from pathlib import Path

import pytest
from support.requirements import in_chromium

from tui_agent.demo_site import BATCH_SIZE
from tui_agent.demo_site.anatomy import ANATOMY, ITEM, LIST
from tui_agent.web.probe import find_lists, list_finder, snapshot
from tui_agent.web.probe import results as probe_results
from tui_agent.web.probe import scripts as probe_scripts
from tui_agent.web.probe import tools as probes

SAME_ELEMENTS = """([found, truth]) => {
  const a = [...document.querySelectorAll(found)], b = [...document.querySelectorAll(truth)];
  return a.length === b.length && a.every((el, i) => el === b[i]);
}"""


async def loaded(page, url: str, layout: str) -> int:
    """Open `layout` and wait until its list is in (first batch, spinner gone); its size."""
    await page.goto(url)
    minimum = BATCH_SIZE if layout in ("infinite", "loadmore") else 1
    await page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n",
        arg=[f"{LIST} > {ITEM}", minimum],
    )
    if ANATOMY[layout].spinner:
        await page.wait_for_selector(ANATOMY[layout].spinner, state="detached")
    return await page.locator(f"{LIST} > {ITEM}").count()


@in_chromium
@pytest.mark.parametrize("layout", sorted(name for name, a in ANATOMY.items() if a.item == ITEM))
async def test_finds_the_product_list_on_every_layout(shared_page, demo_site, layout):
    expected = await loaded(shared_page, demo_site.url(layout), layout)
    found = await find_lists(shared_page)
    best = found[0]
    assert best.count == expected
    assert await shared_page.evaluate(SAME_ELEMENTS, [best.item, f"{LIST} > {ITEM}"])
    assert await shared_page.evaluate(SAME_ELEMENTS, [best.container, LIST])
    assert best.links == expected
    assert best.sample.startswith(demo_site.ground_truth(layout)[0]["title"])
    # Navigation, pagination and filter lists may be listed, but far behind the products.
    assert all(c.count < expected or c.item == best.item for c in found[1:])


@in_chromium
async def test_exact_item_selector_among_mixed_siblings(shared_page):
    await shared_page.set_content(
        "<nav><ul>" + "<li><a href='/x'>Menu</a></li>" * 6 + "</ul></nav>"
        "<div id='results'>"
        + "".join(
            f"<div class='result'><a href='/r/{i}'><h4>Result {i}</h4></a><p>About {i}</p></div>"
            for i in range(5)
        )
        + "<div class='result sponsored-box ad'><p>Sponsored</p></div>"
        "<div class='footer-note'>End</div></div>"
    )
    best = (await find_lists(shared_page))[0]
    assert best.count == 6
    assert await shared_page.evaluate(SAME_ELEMENTS, [best.item, "#results > div.result"])
    assert best.container == "#results"


@in_chromium
async def test_classless_rows_are_scoped_by_their_container(shared_page):
    await shared_page.set_content(
        "<ul><li>one</li><li>two</li><li>three</li></ul>"
        "<table class='listing'><tbody>"
        + "".join(
            f"<tr><td><a href='/j/{i}'>Job {i}</a></td><td>City {i}</td><td>{i}k</td></tr>"
            for i in range(7)
        )
        + "</tbody></table>"
    )
    best = (await find_lists(shared_page))[0]
    assert best.count == 7
    assert await shared_page.evaluate(SAME_ELEMENTS, [best.item, "table.listing tr"])


@in_chromium
async def test_a_page_without_a_list_has_no_candidates(shared_page):
    await shared_page.set_content("<main><h1>Hello</h1><p>One paragraph.</p></main>")
    assert await find_lists(shared_page) == []


def test_product_code_does_not_know_the_demo_site():
    """The finder discovers the page: no demo selector is written into the tools."""
    demo_names = {LIST, ITEM, "product-list", "details-panel", "card-details", "button.load-more"}
    demo_names |= {"page-next", "field-", "toggle-details"}
    for module in (list_finder, snapshot, probes, probe_scripts, probe_results):
        source = Path(module.__file__).read_text()
        assert not [name for name in demo_names if name in source], module.__name__


# --- items spread over siblings, written in different styles ------------------------------

HN = (
    "<table><tbody>"
    + "".join(
        f"<tr class='athing' id='{i}'><td class='rank'>{i}.</td><td class='title'>"
        f"<span class='titleline'><a href='/i/{i}'>Story number {i} about things</a></span>"
        "</td></tr>"
        f"<tr><td></td><td class='subtext'><span class='score'>{i * 3} points</span> by "
        f"<a class='hnuser' href='/u/{i}'>user{i}</a> | <a href='/c/{i}'>{i} comments</a></td></tr>"
        "<tr class='spacer'></tr>"
        for i in range(1, 11)
    )
    + (
        "<tr class='morespace'></tr><tr><td></td><td class='title'>"
        "<a class='morelink' href='?p=2' rel='next'>More</a></td></tr></tbody></table>"
    )
)
TABLEFUL = (
    "<table border=1><tr><td><h1>Quotes</h1></td></tr>"
    + "".join(
        f"<tr><td style='padding-top: 2em;'>“Quote number {i} is wise and long enough” Author: "
        f"Person {i} <a href='/author/{i}'>(about)</a></td></tr>"
        f"<tr><td style='padding-bottom: 2em;'>Tags: <a href='/tag/a{i}'>a{i}</a> "
        "<a href='/tag/b'>b</a></td></tr>"
        for i in range(10)
    )
    + "<tr><td><a href='/page/2'>Next →</a></td></tr></table>"
)
CLASSLESS = (
    "<table><tbody>"
    + "".join(
        f"<tr><td>{i}.</td><td><a href='/p/{i}'>Product {i} name here</a> <span>$1{i}.00</span>"
        f"</td></tr><tr><td></td><td>Tags: <a href='/t/x'>x</a>, <a href='/t/y{i}'>y{i}</a>"
        "</td></tr>"
        for i in range(8)
    )
    + "<tr><td></td><td><a href='?p=0'>← Previous</a> | <a href='?p=2'>Next →</a></td></tr>"
)
CLASSLESS += "</tbody></table>"
DEFINITIONS = (
    "<dl>"
    + "".join(
        f"<dt><a href='/w/{i}'>Word {i}</a></dt><dd>Meaning of word {i} in detail</dd>"
        + ("<dd>Also: other</dd>" if i % 2 else "")
        for i in range(8)
    )
    + "</dl>"
)
HEADINGS = (
    "<main><p>Intro text here.</p>"
    + "".join(
        f"<h2><a href='/a/{i}'>Article {i}</a></h2><p>Summary of article {i}, quite long text.</p>"
        f"<p class='meta'>By author {i}</p>"
        for i in range(6)
    )
    + "<div class='pager'><a href='?p=2'>Older posts</a></div></main>"
)
HEADED = (
    "<table class='quotes'><tr><th>Quote</th><th>Author</th></tr>"
    + "".join(
        f"<tr><td>“Quote number {i} is wise and long enough”</td><td>Person {i}</td></tr>"
        f"<tr><td colspan='2'>Tags: <a href='/tag/a{i}'>a{i}</a> <a href='/tag/b'>b</a></td></tr>"
        for i in range(10)
    )
    + "<tr><td colspan='2'><a href='/page/2'>Next →</a></td></tr></table>"
)
PAGER_ITEM = (
    "<ul>"
    + "".join(
        f"<li><a href='/r/{i}'>Result {i} title</a><p>Snippet {i} text</p></li>" for i in range(7)
    )
    + "<li><a href='?p=2'>Next »</a></li></ul>"
)

RUNS = """([item, siblings]) => [...document.querySelectorAll(item)].map((el) => {
  const out = [el];
  for (let next = el.nextElementSibling; next; next = next.nextElementSibling) {
    if (next.matches(item)) break;
    if (typeof siblings === "number" ? out.length > siblings : !next.matches(siblings)) break;
    out.push(next);
  }
  return out.map((m) => m.innerText.replace(/\\s+/g, " ").trim()).join(" / ");
})"""
"""Each item's elements, as LIST_ITEM and LIST_ITEM_SIBLINGS name them, as text."""


@in_chromium
@pytest.mark.parametrize(
    ("html", "count", "first", "last"),
    [
        (HN, 10, "1. Story number 1 about things / 3 points by user1 | 1 comments / ", "10. Story"),
        (TABLEFUL, 10, "“Quote number 0 is wise and long enough” Author: Person 0 (about) / "
         "Tags: a0 b", "“Quote number 9"),
        (CLASSLESS, 8, "0. Product 0 name here $10.00 / Tags: x, y0", "7. Product 7"),
        (DEFINITIONS, 8, "Word 0 / Meaning of word 0 in detail", "Word 7 / Meaning"),
        (HEADINGS, 6, "Article 0 / Summary of article 0, quite long text. / By author 0",
         "Article 5"),
        (HEADED, 10, "“Quote number 0 is wise and long enough” Person 0 / Tags: a0 b",
         "“Quote number 9"),
    ],
    ids=["hacker-news", "tableful", "classless-rows", "dt-dd", "heading-paragraphs",
         "header-row"],
)  # fmt: skip
async def test_sibling_runs_are_one_item_each_and_the_pager_row_none(
    shared_page, html, count, first, last
):
    await shared_page.set_content(html)
    best = (await find_lists(shared_page))[0]
    assert best.count == count and best.siblings is not None
    assert "nth-" not in best.item
    runs = await shared_page.evaluate(RUNS, [best.item, best.siblings])
    assert len(runs) == count
    assert runs[0] == first
    assert runs[-1].startswith(last)
    assert not any(word in run for run in runs for word in ("Next", "Previous", "More", "Older"))


@in_chromium
async def test_a_pager_item_among_the_items_is_left_out(shared_page):
    await shared_page.set_content(PAGER_ITEM)
    best = (await find_lists(shared_page))[0]
    assert best.count == 7 and best.siblings is None
    texts = await shared_page.locator(best.item).all_inner_texts()
    assert not any("Next" in text for text in texts)


@in_chromium
async def test_menus_and_sidebars_are_weak_and_placed(shared_page):
    await shared_page.set_content(
        "<header><nav><ul>" + "".join(f"<li><a href='/{i}'>Menu {i}</a></li>" for i in range(8))
        + "</ul></nav></header><main><div class='sidebar'><ul>"
        + "".join(f"<li><a href='/t/{i}'>tag {i}</a></li>" for i in range(5))
        + "</ul></div><section class='results'>"
        + "".join(f"<article><h3><a href='/r/{i}'>Result {i} has a longer title</a></h3>"
                  f"<p>About result {i}, in a sentence.</p></article>" for i in range(6))
        + "</section></main>"
    )  # fmt: skip
    found = await find_lists(shared_page)
    best = found[0]
    assert best.item.endswith("article") and (best.place, best.weak) == ("main", False)
    places = {c.place for c in found[1:]}
    assert places <= {"navigation", "sidebar"} and all(c.weak for c in found[1:])


ROUNDUP = (
    "<table class='list'><tr><th>ID</th><th>Title</th><th>Status</th></tr>"
    + "".join(
        f"<tr><td>{i}</td><td><a href='/issue{i}'>Issue {i}: fix the pager</a></td>"
        "<td>chatting</td></tr>"
        for i in range(1, 11)
    )
    + "<tr><th colspan='3'><table width='100%'><tr class='navigation'><th>&nbsp;</th>"
    "<th>1..10 out of 45</th><th><a href='?start=10'>next &gt;&gt;</a></th></tr></table>"
    "</th></tr></table>"
)
TRAC = (
    "<div id='banner'><h1><a href='/'>Corpus</a></h1><ul><li><a href='/login'>Login</a></li>"
    "<li><a href='/prefs'>Preferences</a></li><li><a href='/help'>Help/Guide</a></li>"
    "<li><a href='/about'>About Trac</a></li></ul></div>"
    "<div id='mainnav'><ul><li><a href='/wiki'>Wiki</a></li><li><a href='/timeline'>Timeline"
    "</a></li><li><a href='/roadmap'>Roadmap</a></li><li><a href='/query'>View Tickets</a></li>"
    "</ul></div><div id='main'><div id='content'><h1>Custom Query</h1>"
    "<table class='listing tickets'><thead><tr><th>Ticket</th><th>Summary</th><th>Owner</th>"
    "<th>Priority</th></tr></thead><tbody class='trac-query-results'>"
    + "".join(
        f"<tr class='{'odd' if i % 2 else 'even'} prio{1 + i // 3}'><td class='id'>"
        f"<a href='/ticket/{i}'>#{i}</a></td><td class='summary'><a href='/ticket/{i}'>Ticket "
        f"{i}: fix the search</a></td><td class='owner'>eve</td><td class='priority'>"
        f"{['blocker', 'critical', 'major', 'minor'][i // 3]}</td></tr>"
        for i in range(10)
    )
    + "</tbody></table></div></div><div id='footer'><p>Powered by <a href='/about'>Trac 1.6"
    "</a><br>By <a href='/edgewall'>Edgewall Software</a>.</p><p class='right'>Visit the Trac "
    "open source project at <a href='/trac'>the Trac site</a></p></div>"
)


@in_chromium
async def test_header_rows_and_a_pager_row_in_th_are_no_items(shared_page):
    await shared_page.set_content(ROUNDUP)
    best = (await find_lists(shared_page))[0]
    texts = await shared_page.locator(best.item).all_inner_texts()
    assert best.count == 10 and best.siblings is None
    assert " ".join(texts[0].split()) == "1 Issue 1: fix the pager chatting"
    assert not any("next" in text or "Title" in text for text in texts)


@in_chromium
async def test_the_rows_of_a_listing_win_over_the_page_blocks_around_it(shared_page):
    await shared_page.set_content(TRAC)
    best = (await find_lists(shared_page))[0]
    assert best.count == 10 and "prio" not in best.item
    assert await shared_page.evaluate(SAME_ELEMENTS, [best.item, "tbody.trac-query-results > tr"])
