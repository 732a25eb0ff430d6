"""find_lists in real Chromium: the product list on every demo layout, and generic pages."""

from pathlib import Path

import pytest
from support.requirements import in_chromium

from tui_agent.demo_site import BATCH_SIZE, LAYOUTS
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
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
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
