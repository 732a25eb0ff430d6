"""The demo shop: each layout, read in real Chromium as a user would, shows exactly ground_truth."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio
from support.requirements import in_chromium

from tui_agent.demo_site import (
    BATCH_SIZE,
    CATEGORIES,
    FIELDS,
    LAYOUTS,
    MISSING_RULES,
    PAGE_COUNT,
    PAGE_SIZE,
    PRODUCT_COUNT,
    SORTS,
    DemoSite,
    DemoSiteError,
    ground_truth,
)
from tui_agent.demo_site.anatomy import ANATOMY, CARD_LAYOUTS, ITEM, ITEM_LINK, LIST, PANEL

# Reads fields the way a recipe does: the visible text of each selector (of each tag, for
# tags: a list), the link's href. A field whose element is absent is left out; innerText and
# textContent must agree.
READ = """(roots, [spec, link]) => roots.map((root) => {
  const clean = (text) => text.replace(/\\s+/g, " ").trim();
  const text = (el) => {
    const seen = clean(el.innerText), raw = clean(el.textContent);
    return seen === raw ? seen : `innerText ${seen} != textContent ${raw}`;
  };
  const out = {};
  for (const [name, css] of Object.entries(spec)) {
    const el = root.querySelector(css);
    if (!el) continue;
    out[name] = name === "tags" ? [...el.querySelectorAll(".tag")].map(text) : text(el);
  }
  const anchor = link && root.querySelector(link);
  if (anchor) out.url = anchor.href;
  return out;
})"""
SAMPLE = [*range(0, PRODUCT_COUNT, 17), PRODUCT_COUNT - 1]
"""Items whose details are opened by a click (every currency, every missing-field rule)."""


@pytest_asyncio.fixture(loop_scope="module")
async def page(page):
    """A fresh page; any script error or failed request on it fails the test."""
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    yield page
    assert problems == []


async def read_cards(page, layout: str) -> list[dict[str, str]]:
    spec = ANATOMY[layout].card_fields
    return await page.locator(f"{LIST} > {ITEM}").evaluate_all(READ, [spec, ITEM_LINK])


async def read_details(page, layout: str, link: str | None = None) -> dict[str, str]:
    [record] = await page.locator("html").evaluate_all(READ, [ANATOMY[layout].details_fields, link])
    return record


def only(records: list[dict[str, str]], keys) -> list[dict[str, str]]:
    return [{key: record[key] for key in keys if key in record} for record in records]


async def open_panel(page, layout: str, index: int) -> dict[str, str]:
    await page.locator(ITEM).nth(index).click()
    await page.wait_for_selector(ANATOMY[layout].details_loaded)
    return await read_details(page, layout, link=f"{PANEL} a.field-url")


# --- ground truth and the server, without a browser ------------------------------------


def test_catalog_is_deterministic_and_complete():
    records = ground_truth("panel")
    assert len(records) == PRODUCT_COUNT == len({r["url"] for r in records})
    assert all(list(r) == list(FIELDS) for r in records)
    assert records[0] == {
        "title": "Classic Oak Kettle",
        "price": "$4.99",
        "currency": "USD",
        "rating": "1.0",
        "date": "2024-01-01",
        "seller": "Northwind Goods",
        "category": "Kitchen",
        "tags": ["eco"],
        "description": "Classic kettle in oak, built to last for years.",
        "url": "/products/p-001",
    }
    assert {r["price"][0] for r in records} == {"$", "€", "£"}
    for layout in (*CARD_LAYOUTS, "late", "escape", "facets", "dropdown"):
        if layout not in ("filter", "missing"):
            assert ground_truth(layout) == records
    assert ground_truth("rows") == records[:30]
    assert ground_truth("prose")[0] == {"title": records[0]["title"], "url": "/prose/p-001"}
    assert ground_truth("panel", base_url="http://x:1")[5]["url"] == "http://x:1/products/p-006"


def test_missing_fields_follow_the_documented_rule():
    for number, record in enumerate(ground_truth("missing"), start=1):
        absent = {f for f, (m, r) in MISSING_RULES.items() if number % m == r}
        assert set(FIELDS) - set(record) == absent
    assert any(len(r) == len(FIELDS) for r in ground_truth("missing"))


def test_pages_filters_and_sorts():
    everything = ground_truth("pagination")
    pages = [ground_truth("pagination", page=n) for n in range(1, PAGE_COUNT + 1)]
    assert [len(p) for p in pages] == [PAGE_SIZE] * PAGE_COUNT
    assert [record for page in pages for record in page] == everything
    for slug, label in CATEGORIES.items():
        chosen = ground_truth("filter", category=slug)
        assert len(chosen) == 60 and {r["category"] for r in chosen} == {label}
    oak = ground_truth("filter", q="  OAK ")
    assert oak == [r for r in everything if "oak" in (r["title"] + r["description"]).lower()]
    assert 0 < len(oak) < len(everything)
    keys = {
        "featured": lambda r: r["url"],
        "price-asc": lambda r: float(r["price"][1:]),
        "price-desc": lambda r: -float(r["price"][1:]),
        "rating": lambda r: -float(r["rating"]),
        "newest": lambda r: [-ord(c) for c in r["date"]],
        "title": lambda r: r["title"],
    }
    for sort in SORTS:
        chosen = ground_truth("filter", category="office", sort=sort)
        assert sorted(chosen, key=keys[sort]) == chosen
        assert sorted(map(str, chosen)) == sorted(
            map(str, ground_truth("filter", category="office"))
        )
    assert ground_truth("filter", category="", sort="featured", q="") == everything
    assert ground_truth("filter", q="no such thing") == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ground_truth("grid"), "unknown layout 'grid'"),
        (lambda: ground_truth("panel", page=2), "layout 'panel' takes no query parameters"),
        (lambda: ground_truth("pagination", page=11), "page must be 1..10"),
        (lambda: ground_truth("filter", category="toys"), "unknown category 'toys'"),
        (lambda: ground_truth("filter", sort="cheap"), "unknown sort 'cheap'"),
    ],
)
def test_bad_layouts_and_queries_say_what_is_wrong(call, message):
    with pytest.raises(DemoSiteError, match=message):
        call()


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def test_server_routes_and_quiet_logs(demo_site, capfd):
    base = demo_site.base_url
    assert demo_site.url("filter", category="home", q="oak lamp").endswith(
        "/filter?category=home&q=oak+lamp"
    )
    status, kind, _ = get(base + "/static/site.js")
    assert (status, kind) == (200, "text/javascript; charset=utf-8")
    status, _, body = get(base + "/api/products?layout=loadmore&offset=220&limit=20")
    batch = json.loads(body)
    assert status == 200 and batch["next_offset"] is None and len(batch["items"]) == 20
    assert get(base + "/pagination?page=11")[:2] == (400, "text/html; charset=utf-8")
    assert get(base + "/api/products?layout=panel")[0] == 400
    assert get(base + "/products/p-999")[0] == 404
    assert get(base + "/static/../data.py")[0] == 404
    status, _, home = get(base + "/")
    assert status == 200 and all(f'href="/{layout}"' in home for layout in LAYOUTS)
    assert "http" not in home.replace(base, "")  # nothing loaded from elsewhere
    assert capfd.readouterr().err == ""


def test_stopped_site_frees_its_port_and_drops_kept_connections():
    with DemoSite() as site:
        port = int(site.base_url.rsplit(":", 1)[1])
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        kept.request("GET", "/panel")
        assert kept.getresponse().read() and get(site.url("panel"))[0] == 200
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    with pytest.raises((http.client.HTTPException, OSError)):
        kept.request("GET", "/panel")
        kept.getresponse()
    kept.close()
    with pytest.raises(DemoSiteError, match="unknown layout"):
        DemoSite().url("nope")


def test_anatomy_covers_every_layout():
    assert set(ANATOMY) == set(LAYOUTS)


# --- each layout in Chromium -------------------------------------------------------------


@in_chromium
async def test_panel_shows_the_clicked_item(page, demo_site):
    truth = demo_site.ground_truth("panel")
    await page.goto(demo_site.url("panel"))
    assert await read_cards(page, "panel") == only(truth, ("title", "price", "url"))
    assert await page.locator(".panel-empty").count() == 1
    for index in SAMPLE:
        assert await open_panel(page, "panel", index) == truth[index]
    assert await page.locator(f"{ITEM}.selected").count() == 1
    await page.locator("button.panel-close").click()
    assert await page.locator(".panel-empty").count() == 1


# What a click in the middle of the card lands on: the card, the modal's backdrop, or else.
HIT = """(card) => {
  const box = card.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  const layer = hit && hit.closest("li.card, div.modal-backdrop");
  return layer ? layer.className : String(hit && hit.tagName);
}"""


@in_chromium
async def test_modal_blocks_the_list_until_its_close_button_is_clicked(page, demo_site):
    anatomy = ANATOMY["modal"]
    truth = demo_site.ground_truth("modal")
    await page.goto(demo_site.url("modal"))
    assert await read_cards(page, "modal") == only(truth, ("title", "price", "url"))
    assert await page.locator(anatomy.extra["backdrop"]).count() == 0
    for index in SAMPLE:
        card = page.locator(ITEM).nth(index)
        await card.click()
        await page.wait_for_selector(anatomy.details_loaded)
        link = f"{anatomy.details} a.field-url"
        assert await read_details(page, "modal", link=link) == truth[index]
        # Neither Escape nor a click on the backdrop closes it, and the backdrop takes the
        # clicks meant for the list.
        await page.keyboard.press("Escape")
        await page.locator(anatomy.extra["backdrop"]).click(position={"x": 5, "y": 5})
        assert await page.locator(anatomy.details).count() == 1
        assert await card.evaluate(HIT) == "modal-backdrop"
        await page.locator(anatomy.close).click()
        assert await page.locator(anatomy.extra["backdrop"]).count() == 0
        assert await card.evaluate(HIT) == "card"


@in_chromium
async def test_navigate_opens_detail_pages_and_back_returns(page, demo_site):
    truth = demo_site.ground_truth("navigate")
    await page.goto(demo_site.url("navigate"))
    assert await read_cards(page, "navigate") == only(truth, ("title", "price", "url"))
    for index in SAMPLE[::3]:  # each is a full page load there and back
        card = page.locator(ITEM).nth(index)
        await card.scroll_into_view_if_needed()
        scrolled = await page.evaluate("window.scrollY")
        await card.locator(ITEM_LINK).click()
        await page.wait_for_selector(ANATOMY["navigate"].details_loaded)
        assert {**await read_details(page, "navigate"), "url": page.url} == truth[index]
        await page.go_back()
        await page.wait_for_selector(ITEM)
        assert page.url == demo_site.url("navigate")
        assert await page.evaluate("window.scrollY") == scrolled
    await page.locator(ITEM).nth(2).locator(".price").click()  # anywhere on the card
    await page.wait_for_url(truth[2]["url"])
    await page.locator(ANATOMY["navigate"].extra["back_link"]).click()
    await page.wait_for_url(demo_site.url("navigate"))


@in_chromium
async def test_inline_expands_under_the_item_and_folds(page, demo_site):
    truth = demo_site.ground_truth("inline")
    anatomy = ANATOMY["inline"]
    await page.goto(demo_site.url("inline"))
    assert await read_cards(page, "inline") == only(truth, ("title", "price", "url"))
    assert await page.locator(anatomy.details).count() == 0
    cards = page.locator(ITEM)
    for index in SAMPLE:
        await cards.nth(index).click()
        [record] = await cards.nth(index).evaluate_all(READ, [anatomy.details_fields, ITEM_LINK])
        assert record == truth[index]
    assert await page.locator(anatomy.details).count() == len(SAMPLE)
    toggle = cards.nth(SAMPLE[1]).locator(anatomy.extra["toggle"])
    assert await toggle.get_attribute("aria-expanded") == "true"
    await toggle.click()
    assert await cards.nth(SAMPLE[1]).locator(anatomy.details).count() == 0
    assert await toggle.get_attribute("aria-expanded") == "false"


@in_chromium
async def test_pagination_next_until_the_last_page(page, demo_site):
    anatomy = ANATOMY["pagination"]
    await page.goto(demo_site.url("pagination"))
    seen: list[dict[str, str]] = []
    for number in range(1, PAGE_COUNT + 1):
        cards = await read_cards(page, "pagination")
        assert cards == demo_site.ground_truth("pagination", page=number)
        seen += cards
        if number < PAGE_COUNT:
            await page.locator(anatomy.next_page).click()
            await page.wait_for_url(demo_site.url("pagination", page=number + 1))
    assert seen == demo_site.ground_truth("pagination")
    assert await page.locator(anatomy.next_page).count() == 0
    assert await page.locator(anatomy.extra["last_page"]).count() == 1
    assert await open_panel(page, "pagination", PAGE_SIZE - 1) == seen[-1]


@in_chromium
async def test_infinite_scroll_loads_batches_until_the_end(page, demo_site):
    anatomy = ANATOMY["infinite"]
    await page.goto(demo_site.url("infinite"))
    await page.wait_for_selector(ITEM)
    counts = [await page.locator(ITEM).count()]
    while not await page.locator(anatomy.end_marker).count():
        await page.mouse.wheel(0, 20000)
        await page.wait_for_function(
            "([item, end, n]) => document.querySelectorAll(item).length > n"
            " || document.querySelector(end)",
            arg=[ITEM, anatomy.end_marker, counts[-1]],
        )
        counts.append(await page.locator(ITEM).count())
    assert counts == list(range(BATCH_SIZE, PRODUCT_COUNT + 1, BATCH_SIZE))
    assert await read_cards(page, "infinite") == demo_site.ground_truth("infinite")
    for leftover in (anatomy.extra["loading"], anatomy.extra["sentinel"]):
        assert await page.locator(leftover).count() == 0
    assert (
        await open_panel(page, "infinite", PRODUCT_COUNT - 1)
        == (demo_site.ground_truth("infinite")[-1])
    )


@in_chromium
async def test_load_more_until_the_button_is_gone(page, demo_site):
    anatomy = ANATOMY["loadmore"]
    await page.goto(demo_site.url("loadmore"))
    counts = [await page.locator(ITEM).count()]
    while await page.locator(anatomy.load_more).count():
        await page.locator(anatomy.load_more).click()
        await page.wait_for_function(
            "([item, n]) => document.querySelectorAll(item).length > n",
            arg=[ITEM, counts[-1]],
        )
        counts.append(await page.locator(ITEM).count())
    assert counts == list(range(BATCH_SIZE, PRODUCT_COUNT + 1, BATCH_SIZE))
    assert await page.locator(anatomy.end_marker).count() == 1
    truth = demo_site.ground_truth("loadmore")
    assert await read_cards(page, "loadmore") == truth
    assert await open_panel(page, "loadmore", 130) == truth[130]


@in_chromium
async def test_filter_sort_and_search_controls(page, demo_site):
    controls = ANATOMY["filter"].extra
    await page.goto(demo_site.url("filter"))
    assert await read_cards(page, "filter") == demo_site.ground_truth("filter")

    await page.select_option(controls["category"], "home")
    await page.select_option(controls["sort"], "price-desc")
    await page.fill(controls["search"], "oak")
    await page.locator(controls["submit"]).click()
    await page.wait_for_url("**q=oak")
    query = {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}
    assert query == {"category": "home", "sort": "price-desc", "q": "oak"}
    chosen = demo_site.ground_truth("filter", **query)
    assert 0 < len(chosen) < 60 and await read_cards(page, "filter") == chosen
    assert await page.locator(controls["category"]).input_value() == "home"
    assert await open_panel(page, "filter", len(chosen) - 1) == chosen[-1]

    await page.select_option(controls["category"], "")
    await page.select_option(controls["sort"], "newest")
    await page.fill(controls["search"], "Lamp")
    await page.press(controls["search"], "Enter")
    await page.wait_for_url("**q=Lamp")
    lamps = demo_site.ground_truth("filter", category="", sort="newest", q="Lamp")
    assert len(lamps) == 30 and await read_cards(page, "filter") == lamps

    await page.fill(controls["search"], "no such thing")
    await page.press(controls["search"], "Enter")
    await page.wait_for_selector(controls["no_results"])
    assert await page.locator(ITEM).count() == 0


@in_chromium
async def test_slow_list_appears_after_the_spinner(page, demo_site):
    spinner = ANATOMY["slow"].spinner
    response = await page.goto(demo_site.url("slow"))
    served = await response.text()
    assert 'class="loading-spinner"' in served and 'class="card' not in served
    state = (
        f"() => [!!document.querySelector('{spinner}'), document.querySelectorAll('{ITEM}').length]"
    )
    assert await page.evaluate(state) in ([True, 0], [False, PRODUCT_COUNT])
    await page.wait_for_selector(spinner, state="detached")
    assert await page.evaluate(state) == [False, PRODUCT_COUNT]
    assert await read_cards(page, "slow") == demo_site.ground_truth("slow")


@in_chromium
async def test_missing_fields_are_absent_not_empty(page, demo_site):
    truth = demo_site.ground_truth("missing")
    await page.goto(demo_site.url("missing"))
    assert await read_cards(page, "missing") == truth
    selectors = ", ".join(ANATOMY["missing"].card_fields.values())
    empty = await page.locator(selectors).evaluate_all(
        "els => els.filter(el => !el.textContent.trim()).length"
    )
    assert empty == 0
    gaps = set()
    for index in SAMPLE:
        assert await open_panel(page, "missing", index) == truth[index]
        gaps |= set(FIELDS) - set(truth[index])
        labels = await page.locator(f"{PANEL} dt").all_inner_texts()
        assert len(labels) == sum(
            f in truth[index] for f in FIELDS if f not in ("title", "url", "description")
        )
    assert gaps == set(MISSING_RULES)


# --- the command ----------------------------------------------------------------------------


def stopped(process: subprocess.Popen[str], timeout: float = 30) -> tuple[str, str]:
    """The output of `process` once it has ended; if it does not end within `timeout`, the
    test fails with where its threads wait (py-spy) and what it said."""
    try:
        return process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        where = subprocess.run(
            [str(Path(sys.executable).with_name("py-spy")), "dump", "--pid", str(process.pid)],
            capture_output=True,
            text=True,
        )
        process.kill()
        _, err = process.communicate()
        pytest.fail(
            f"still running {timeout:g}s after Ctrl+C:\n{where.stdout}{where.stderr}\n{err}"
        )


def test_demo_site_command_serves_until_interrupted(tmp_path):
    env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml")}
    command = [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), "demo-site"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        first = process.stdout.readline()
        base = first.split()[3].rstrip("/")
        lines = [process.stdout.readline().split() for _ in LAYOUTS]
        assert lines == [[layout, f"{base}/{layout}"] for layout in LAYOUTS]
        assert get(f"{base}/panel")[0] == 200
        taken = subprocess.run(
            [*command, "--port", base.rsplit(":", 1)[1]],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert taken.returncode == 1
        assert taken.stderr.startswith("tui-agent: cannot serve on 127.0.0.1:")
        assert len(taken.stderr.strip().splitlines()) == 1
    finally:
        process.send_signal(signal.SIGINT)
        out, err = stopped(process)
    assert process.returncode == 0, err
    assert out.strip().endswith("Demo site stopped.") and err == ""
