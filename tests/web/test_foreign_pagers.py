"""Pagers of web software no one here wrote, found by scroll_and_observe and followed.

Each layout lists 12 items over 3 pages on a loopback server; its pager is what real software
serves: a `<nav>` rendered late with the list (or seconds after it), an `<a>` with no address
whose click handler (an onclick attribute, or a listener) navigates, a `<button>`, Roundup's
pager table nested in the list table's last row, Pelican's glyphs (⟩ ⟫), Datasette's absolute
"Next page" in a `<p>`, a glyph only the page's `<link rel=next>` explains, and Django admin's
page numbers with no Next. The control the probe reports is then clicked as the recipe clicks
it (CLICK_IF_EXISTS next_page), page after page, until it is gone: every item of every page is
seen once.
"""

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.requirements import in_chromium

from tui_agent.web.probe import Probes, find_lists
from tui_agent.web.recipe import conditions
from tui_agent.web.recipe.format import Bindings, ClickIfExists
from tui_agent.web.recipe.page_actions import PageActions

PAGES = 3
PER_PAGE = 4
NEXT_PAGE = ClickIfExists(type="CLICK_IF_EXISTS", target="next_page", timeout=3000)


def _items(n: int) -> list[str]:
    first = (n - 1) * PER_PAGE + 1
    return [f"Product {i:02d}" for i in range(first, first + PER_PAGE)]


def _cards(n: int) -> str:
    return "".join(
        f'<li class="product"><h2>{t}</h2><span class="price">${i}.99</span></li>'
        for i, t in enumerate(_items(n), 10)
    )


def _page(n: int, pager: str, *, head: str = "", script: str = "") -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Catalog {n}</title>{head}"
        "</head><body><header><nav><a href='/'>Home</a> <a href='/about'>About</a> "
        f"<a href='/help'>Help</a></nav></header><main><h1>Catalog</h1>"
        f"<ul class='products'>{_cards(n)}</ul>{pager}</main>{script}</body></html>"
    )


def nav_late(n: int, base: str) -> str:
    """The list and its pager in a `<nav>`, both written by a script a second after load."""
    pager = f'<nav class="pager"><a class="next" href="/nav_late/{n + 1}">Next »</a></nav>'
    body = f"<ul class='products'>{_cards(n)}</ul>" + (pager if n < PAGES else "")
    return (
        "<!doctype html><html><head><meta charset='utf-8'></head><body><header><nav>"
        "<a href='/'>Home</a> <a href='/about'>About</a> <a href='/help'>Help</a></nav></header>"
        "<main id='app'></main><script>setTimeout(() => { document.getElementById('app')"
        f".innerHTML = {body!r}; }}, 1000);</script></body></html>"
    )


def pager_late(n: int, base: str) -> str:
    """The list at load, its pager written by a timer three seconds later."""
    pager = f'<nav class="pager"><a class="next" href="/pager_late/{n + 1}">Next »</a></nav>'
    script = (
        "<script>setTimeout(() => document.querySelector('main').insertAdjacentHTML("
        f"'beforeend', {pager!r}), 3000);</script>"
    )
    return _page(n, "", script=script if n < PAGES else "")


def onclick(n: int, base: str) -> str:
    """quotes' "Next" as an `<a>` with no href and an onclick attribute."""
    go = f"location.href='/onclick/{n + 1}'"
    pager = f'<ul class="pager"><li class="next"><a onclick="{go}">Next →</a></li></ul>'
    return _page(n, pager if n < PAGES else "")


def listener(n: int, base: str) -> str:
    """An `<a>` with no href that a listener (addEventListener) follows."""
    pager = '<div class="paging"><a id="forward">Next</a></div>' if n < PAGES else ""
    script = (
        "<script>document.getElementById('forward')?.addEventListener('click', () => "
        f"location.assign('/listener/{n + 1}'));</script>"
    )
    return _page(n, pager, script=script)


def button(n: int, base: str) -> str:
    """A `<button>` whose click handler loads the next page."""
    pager = '<button type="button" class="more-pages">Next page</button>' if n < PAGES else ""
    script = (
        "<script>document.querySelector('.more-pages')?.addEventListener('click', () => "
        f"location.assign('/button/{n + 1}'));</script>"
    )
    return _page(n, pager, script=script)


def roundup(n: int, base: str) -> str:
    """Roundup's index: a header row of `<th>`, the items, the pager table in the last row."""
    rows = "".join(
        f'<tr><td>{i}</td><td><a href="/issue{i}">{t}</a></td><td>chatting</td></tr>'
        for i, t in enumerate(_items(n), (n - 1) * PER_PAGE + 1)
    )
    nxt = f'<a href="/roundup/{n + 1}">next &gt;&gt;</a>&nbsp;' if n < PAGES else ""
    pager = (
        '<tr><th colspan="3"><table width="100%"><tr class="navigation"><th>&nbsp;</th>'
        f"<th>{n}..{n + 3} out of 12</th><th>{nxt}</th></tr></table></th></tr>"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'></head><body><table class='list'>"
        f"<tr><th>ID</th><th>Title</th><th>Status</th></tr>{rows}{pager}</table></body></html>"
    )


def pelican(n: int, base: str) -> str:
    """Pelican's default theme: a glyph-only pager (⟩ next, ⟫ last) in a `<nav>`."""
    links = []
    if n > 1:
        links += [
            '<li><a href="/pelican/1">&Lang;</a></li>',
            f'<li><a href="/pelican/{n - 1}">&lang;</a></li>',
        ]
    links.append(f"<li>Page {n} / {PAGES}</li>")
    if n < PAGES:
        links += [
            f'<li><a href="/pelican/{n + 1}">&rang;</a></li>',
            f'<li><a href="/pelican/{PAGES}">&Rang;</a></li>',
        ]
    return _page(n, f"<nav><ul>{''.join(links)}</ul></nav>")


def datasette(n: int, base: str) -> str:
    """Datasette's "Next page", an absolute address in a plain `<p>`."""
    pager = f'<p><a href="{base}/datasette/{n + 1}">Next page</a></p>' if n < PAGES else ""
    return _page(n, pager)


def rel_next(n: int, base: str) -> str:
    """A glyph no word list knows, explained only by the page's `<link rel=next>`."""
    if n == PAGES:
        return _page(n, "")
    head = f'<link rel="next" href="/rel_next/{n + 1}">'
    return _page(n, f'<div class="paging"><a href="/rel_next/{n + 1}">\u23ed</a></div>', head=head)


def django(n: int, base: str) -> str:
    """Django admin's paginator: page numbers only, the current one a `span.this-page`."""
    numbers = " ".join(
        f'<span class="this-page">{k}</span>' if k == n else f'<a href="?p={k}">{k}</a>'
        for k in range(1, PAGES + 1)
    )
    return _page(n, f'<p class="paginator">{numbers} {PAGES * PER_PAGE} books</p>')


LAYOUTS: dict[str, Callable[[int, str], str]] = {
    f.__name__: f
    for f in (
        nav_late,
        pager_late,
        onclick,
        listener,
        button,
        roundup,
        pelican,
        datasette,
        rel_next,
        django,
    )
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        parts = path.strip("/").split("/")
        layout = LAYOUTS.get(parts[0])
        if layout is None:
            self.send_error(404)
            return
        number = int(parts[1]) if len(parts) > 1 else 1
        if query.startswith("p="):
            number = int(query.removeprefix("p="))
        base = f"http://{self.headers['Host']}"  # as Datasette builds its links
        body = layout(number, base).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


ITEMS_JS = """(sel) => [...document.querySelectorAll(sel)]
  .map((el) => (el.innerText.match(/Product \\d+/) || ["?"])[0])"""
"""The product each list item names."""


@in_chromium
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
async def test_the_pager_is_found_and_followed_to_the_last_page(page, server, layout):
    await page.goto(f"{server}/{layout}/1")
    await page.wait_for_selector("text=Product 01")
    best = (await find_lists(page))[0]
    probes = Probes(page, wait=3.0)
    probes.item_selector = best.item
    observed = await probes.scroll_and_observe()
    facts = observed.facts
    assert facts["pagination"], observed.text
    numbered = facts["pagination_numbered"]
    by_text = not facts["pagination_stable"] and not numbered
    bindings = Bindings(
        LIST=best.container,
        LIST_ITEM=best.item,
        NEXT_PAGE_BUTTON=facts["pagination"],
        NEXT_PAGE_TEXT=facts["pagination_text"] if by_text else None,
        NEXT_PAGE_NUMBERED=numbered,
    )
    actions = PageActions(page, bindings, wait=3.0)
    seen = list(await page.evaluate(ITEMS_JS, best.item))
    for _ in range(PAGES):
        _, clicked = await actions.click_if_exists(NEXT_PAGE)
        if not clicked["clicked"]:
            break
        assert clicked["changed"], f"the list did not change after {facts['pagination']}"
        seen += await page.evaluate(ITEMS_JS, best.item)
    assert seen == [t for n in range(1, PAGES + 1) for t in _items(n)]
    assert (await conditions.list_signature(page, bindings))[0] == PER_PAGE
