"""The planner's tools in real Chromium against the demo shop, checked with its anatomy."""

import pytest
from support.requirements import in_chromium

from tui_agent.demo_site import BATCH_SIZE
from tui_agent.demo_site.anatomy import ANATOMY, ITEM, LIST, PANEL
from tui_agent.events import ToolCall, ToolResult
from tui_agent.web.probe import TOOL_SPECS, Probes, VerifiedSelectors, traced

SAME_ELEMENT = """([a, b]) => {
  const x = document.querySelector(a);
  return x !== null && x === document.querySelector(b);
}"""


async def opened(page, site, layout: str, fresh: bool = True) -> Probes:
    """Probes on `layout` (reloaded unless `fresh` is False and it is already open)."""
    if fresh or page.url != site.url(layout):
        await page.goto(site.url(layout))
    minimum = BATCH_SIZE if layout in ("infinite", "loadmore") else 1
    await page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n",
        arg=[f"{LIST} > {ITEM}", minimum],
    )
    return Probes(page)


def texts(result) -> dict[str, str]:
    """Content selector -> the text the tool read through it."""
    return {entry["selector"]: entry["text"] for entry in result.facts["content_selectors"]}


# --- probe_click ---------------------------------------------------------------------------


@in_chromium
async def test_click_on_the_panel_layout_shows_the_panel(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "panel")
    call, result, probe = await traced(probes, "probeClick", {"selector": ITEM}, "c1", step=2)
    facts = probe.facts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert (call.call_id, call.name, call.step, result.call_id, result.ok) == (
        "c1",
        "probeClick",
        2,
        "c1",
        True,
    )
    assert facts["behavior"] == "shows_panel" and not facts["url_changed"]
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["appeared"], PANEL])
    assert facts["appeared"] in probes.verified
    assert result.facts["verified"][facts["appeared"]] == 1
    assert "details panel appeared" in result.output
    # The panel sits beside the list: its close control is named but not needed, not clicked.
    assert not facts["covers_list"] and facts["closed_by"] is None
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["close"], "button.panel-close"])
    assert "not needed: the list stays clickable" in result.output
    truth = demo_site.ground_truth("panel")[0]
    assert truth["title"] in texts(probe).values() and truth["price"] in texts(probe).values()
    assert result.duration > 0


@in_chromium
async def test_click_on_the_navigate_layout_navigates_and_comes_back(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "navigate")
    list_url = shared_page.url
    probe = await probes.probe_click(ITEM)
    facts = probe.facts
    truth = demo_site.ground_truth("navigate")[0]
    assert facts["behavior"] == "navigates" and facts["url_changed"]
    assert facts["url"] == truth["url"]
    assert facts["restored"] and shared_page.url == list_url
    assert await shared_page.locator(f"{LIST} > {ITEM}").count() > 0
    # The detail page's selectors were verified there, before going back.
    assert facts["appeared"] == ANATOMY["navigate"].details
    found = {text: selector for selector, text in texts(probe).items()}
    assert truth["title"] in found and found[truth["title"]] in probes.verified
    assert "navigated" in probe.text and "list is there again" in probe.text


@in_chromium
async def test_click_on_the_inline_layout_expands_the_item_and_folds_it(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "inline")
    probe = await probes.probe_click(ITEM)
    facts = probe.facts
    assert facts["behavior"] == "inline" and not facts["url_changed"]
    assert facts["appeared"] == ANATOMY["inline"].details  # relative to the item
    assert facts["appeared_absolute"] in probes.verified
    assert demo_site.ground_truth("inline")[0]["price"] in texts(probe).values()
    assert facts["restored"]
    assert await shared_page.locator(f"{ITEM} {ANATOMY['inline'].details}").count() == 0


MODAL_PAGE = """
<ul class="jobs">
  <li class="job"><a href="#" onclick="openModal(0); return false">Baker</a> <span>Lyon</span></li>
  <li class="job"><a href="#" onclick="openModal(1); return false">Cook</a> <span>Nice</span></li>
  <li class="job"><a href="#" onclick="openModal(2); return false">Waiter</a> <span>Metz</span></li>
</ul>
<div class="job-modal" role="dialog" hidden><h2 class="job-title">-</h2><p>Full time</p></div>
<script>
  const modal = document.querySelector(".job-modal");
  function openModal(i) {
    modal.querySelector(".job-title").textContent = ["Baker", "Cook", "Waiter"][i];
    modal.hidden = false;
  }
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") modal.hidden = true; });
</script>"""


@in_chromium
async def test_a_hidden_dialog_that_opens_is_a_panel_and_escape_closes_it(shared_page):
    await shared_page.set_content(MODAL_PAGE)
    probe = await Probes(shared_page).probe_click("li.job a")
    facts = probe.facts
    assert facts["behavior"] == "shows_panel"
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["appeared"], "div.job-modal"])
    assert "Baker" in texts(probe).values()
    assert facts["restored"] and await shared_page.locator("div.job-modal").is_hidden()


CONTAINS = "([a, b]) => document.querySelector(a).contains(document.querySelector(b))"


@in_chromium
async def test_a_modal_over_the_list_is_closed_by_its_close_control(shared_page, demo_site):
    anatomy = ANATOMY["modal"]
    probes = await opened(shared_page, demo_site, "modal")
    probe = await probes.probe_click(ITEM)
    facts = probe.facts
    assert facts["behavior"] == "shows_panel" and facts["covers_list"]
    assert facts["close"] in probes.verified and probe.verified[facts["close"]] == 1
    assert facts["closed_by"] == "close" and facts["restored"]
    assert await shared_page.locator(anatomy.extra["backdrop"]).count() == 0
    assert "The details cover the list" in probe.text
    assert f"Clicked the close control `{facts['close']}`" in probe.text
    assert demo_site.ground_truth("modal")[0]["title"] in texts(probe).values()
    # What it named is the dialog's own: the backdrop caught the clicks, the close button is
    # the dialog's, and the details are the dialog's.
    await shared_page.locator(ITEM).nth(1).click()
    await shared_page.wait_for_selector(anatomy.details_loaded)
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["close"], anatomy.close])
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["blocker"], anatomy.extra["backdrop"]])
    assert await shared_page.evaluate(CONTAINS, [facts["appeared"], anatomy.details])


OVERLAY_PAGE = """
<ul class="jobs">
  <li class="job"><a href="#">Baker</a> <span>Lyon</span></li>
  <li class="job"><a href="#">Cook</a> <span>Nice</span></li>
  <li class="job"><a href="#">Waiter</a> <span>Metz</span></li>
</ul>
<script>
(() => {
  const closable = CLOSABLE;
  document.addEventListener("click", (e) => {
    const a = e.target.closest("li.job a");
    if (!a) return;
    e.preventDefault();
    const sheet = document.createElement("div");
    sheet.className = "sheet";
    sheet.style.cssText = "position: fixed; inset: 0; background: white";
    sheet.innerHTML = `<h2 class="sheet-title">${a.textContent}</h2><p>Full time</p>`
      + "<button class='apply'>Apply now</button>" + (closable ? "<button class='icon-btn' "
      + "aria-label='Close dialog'><svg width='12' height='12'></svg></button>" : "");
    document.body.append(sheet);
    const close = sheet.querySelector(".icon-btn");
    if (close) close.addEventListener("click", () => sheet.remove());
  });
})();
</script>"""


@in_chromium
async def test_an_overlay_without_a_working_escape_is_closed_by_its_labelled_button(shared_page):
    await shared_page.set_content(OVERLAY_PAGE.replace("CLOSABLE", "true"))
    probe = await Probes(shared_page).probe_click("li.job a")
    facts = probe.facts
    assert facts["behavior"] == "shows_panel" and facts["covers_list"]
    assert facts["closed_by"] == "close" and facts["restored"]
    assert await shared_page.locator("div.sheet").count() == 0
    await shared_page.locator("li.job a").first.click()
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["close"], "button.icon-btn"])


@in_chromium
async def test_an_overlay_that_nothing_closes_is_said_to_stay(shared_page):
    await shared_page.set_content(OVERLAY_PAGE.replace("CLOSABLE", "false"))
    probe = await Probes(shared_page).probe_click("li.job a")
    facts = probe.facts
    assert facts["behavior"] == "shows_panel" and facts["covers_list"]
    assert facts["close"] is None and facts["closed_by"] is None and not facts["restored"]
    assert "No close control" in probe.text and "stayed open (not restored)" in probe.text


SCRIPTED_VIEWS = """
<main id="app"></main>
<script>
  const names = ["Alpha", "Bravo", "Charlie"];
  const app = document.getElementById("app");
  const list = () => { app.innerHTML = "<ul class='rows'>" + names.map((n, i) =>
    `<li class='row'><a href='/view/${i}' data-i='${i}'>${n} item</a> <em>2024</em></li>`
  ).join("") + "</ul>"; };
  const detail = (i) => { app.innerHTML = "<article class='item-view'>"
    + `<h1 class='item-name'>${names[i]}</h1><p>Body ${i}</p></article>`; };
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-i]");
    if (!a) return;
    e.preventDefault();
    history.pushState({ i: a.dataset.i }, "", a.href);
    detail(Number(a.dataset.i));
  });
  window.addEventListener("popstate", (e) => (e.state ? detail(Number(e.state.i)) : list()));
  list();
</script>"""


@in_chromium
async def test_a_scripted_view_change_is_navigation_and_back_restores_it(shared_page, demo_site):
    await shared_page.goto(f"{demo_site.base_url}/help")
    list_url = shared_page.url
    await shared_page.set_content(SCRIPTED_VIEWS)
    probes = Probes(shared_page)
    probe = await probes.probe_click("li.row a")
    facts = probe.facts
    assert facts["behavior"] == "navigates" and facts["url"].endswith("/view/0")
    assert "Alpha" in texts(probe).values()
    assert facts["restored"] and shared_page.url == list_url
    assert await shared_page.locator("li.row").count() == 3


@in_chromium
async def test_items_loading_while_clicking_are_not_the_panel(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "infinite")
    probe = await probes.probe_click(f"{ITEM}:nth-child({BATCH_SIZE})")
    assert probe.facts["behavior"] == "shows_panel"
    assert await shared_page.evaluate(SAME_ELEMENT, [probe.facts["appeared"], PANEL])


@in_chromium
async def test_click_that_changes_nothing(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "panel")
    probe = await probes.probe_click("h1")
    assert probe.facts["behavior"] == "nothing"
    assert probe.facts["appeared"] is None and probe.facts["restored"]
    assert "Nothing new appeared" in probe.text


# --- describe_element ----------------------------------------------------------------------


@in_chromium
async def test_describe_the_open_panel_gives_verified_field_selectors(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "panel")
    await shared_page.locator(ITEM).first.click()
    await shared_page.wait_for_selector(ANATOMY["panel"].details_loaded)
    probe = await probes.describe_element(PANEL)
    truth = demo_site.ground_truth("panel")[0]
    assert probe.facts["count"] == 1 and truth["title"] in probe.facts["text"]
    assert probe.facts["children"] and all(c["selector"] for c in probe.facts["children"])
    found = texts(probe)
    for field in ("title", "price", "seller"):
        selector = next(s for s, text in found.items() if text == truth[field])
        assert selector in probes.verified and selector in probe.verified
        # The selector really reads that field in the page.
        read = await shared_page.locator(selector).first.text_content()
        assert " ".join(read.split()) == truth[field]
    assert "VERIFIED CONTENT SELECTORS" in probe.text


@in_chromium
async def test_describe_a_list_item_gives_relative_field_selectors(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "pagination")
    probe = await probes.describe_element(ITEM)
    assert probe.facts["count"] == 24
    relative = {e["relative"]: e for e in probe.facts["content_selectors"]}
    link = next(e for e in relative.values() if e["kind"] == "link")
    assert link["attribute"] == "href" and link["count"] == 24
    for entry in relative.values():
        assert entry["relative"] in probes.verified
        assert entry["count"] >= 1 and entry["in_element"] >= 1


# --- scroll_and_observe --------------------------------------------------------------------


@in_chromium
async def test_scrolling_the_infinite_layout_loads_more(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "infinite")
    probe = await probes.scroll_and_observe("page")
    facts = probe.facts
    assert facts["item_selector"] == ITEM
    assert facts["more_loaded"] and facts["after"] > facts["before"] >= BATCH_SIZE
    assert facts["pagination"] is None and facts["load_more"] is None
    assert "loaded more items" in probe.text


@in_chromium
async def test_scrolling_the_loadmore_layout_finds_the_button(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "loadmore")
    probes.item_selector = ITEM
    probe = await probes.scroll_and_observe("list")
    facts = probe.facts
    assert not facts["more_loaded"] and facts["before"] == facts["after"] == BATCH_SIZE
    assert await shared_page.evaluate(
        SAME_ELEMENT, [facts["load_more"], ANATOMY["loadmore"].load_more]
    )
    assert facts["load_more"] in probes.verified


@in_chromium
async def test_scrolling_the_pagination_layout_finds_next(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "pagination")
    probe = await probes.call("scrollAndObserve", {"target": "page"})
    facts = probe.facts
    assert probe.ok and facts["at_end"] and not facts["more_loaded"]
    next_page = ANATOMY["pagination"].next_page
    assert await shared_page.evaluate(SAME_ELEMENT, [facts["pagination"], next_page])
    assert facts["pagination"] in probes.verified


SCROLL_BOX = """
<div id="feed-box" style="height: 200px; overflow-y: auto">
  <ul class="feed"></ul>
</div>
<script>
  const box = document.getElementById("feed-box"), feed = box.querySelector("ul");
  const more = () => { for (let i = 0; i < 10; i++) {
    const n = feed.children.length;
    feed.insertAdjacentHTML("beforeend",
      `<li class="post" style="height: 60px"><a href="/p/${n}">Post ${n}</a> by someone</li>`);
  } };
  box.addEventListener("scroll", () => {
    if (box.scrollTop + box.clientHeight >= box.scrollHeight - 5 && feed.children.length < 30) {
      setTimeout(more, 100);
    }
  });
  more();
</script>"""


@in_chromium
async def test_scrolling_a_list_in_its_own_scroll_box(shared_page):
    await shared_page.set_content(SCROLL_BOX)
    probe = await Probes(shared_page).call("scroll_and_observe", {"target": "list"})
    facts = probe.facts
    assert facts["item_selector"] == "li.post" and facts["before"] == 10
    assert facts["more_loaded"] and facts["after"] == 30 and facts["at_end"]
    assert "`#feed-box`" in probe.text


@in_chromium
async def test_scrolling_the_panel_layout_loads_nothing_and_ends(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "panel")
    probe = await probes.scroll_and_observe()
    facts = probe.facts
    assert not facts["more_loaded"] and facts["at_end"] and facts["after"] == 240
    assert facts["pagination"] is None and facts["load_more"] is None
    assert "Item count unchanged" in probe.text and "end of the page" in probe.text


# --- a model's mistakes ---------------------------------------------------------------------


@in_chromium
@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("probe_click", {"selector": "li..card"}, "not a valid CSS selector"),
        ("describe_element", {"selector": ".no-such-thing"}, "no element matches"),
        ("describe_element", {}, "needs a `selector` argument"),
        ("scroll_and_observe", {"target": "sideways"}, 'must be "page" or "list"'),
        ("click_everything", {"selector": "a"}, "Unknown tool 'click_everything'"),
        ("describeElement", "li.card", "needs its arguments as a JSON object"),
    ],
)
async def test_a_bad_call_answers_not_ok_in_one_sentence(
    shared_page, demo_site, name, arguments, says
):
    probes = await opened(shared_page, demo_site, "panel", fresh=False)
    before = len(probes.verified)
    _call, result, probe = await traced(probes, name, arguments, "bad")
    assert not probe.ok and not result.ok and result.facts["verified"] == {}
    assert says in result.output and result.output.count("\n") == 0
    assert result.output.endswith(".")
    assert len(probes.verified) == before


# --- snapshot and count ---------------------------------------------------------------------


@in_chromium
async def test_snapshot_is_capped_and_shows_the_list(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "filter")
    text = await probes.snapshot(max_tokens=1500)
    assert len(text) <= 1500 * 4
    assert f"`{ITEM}`: 240" in text and "238 more like this" in text
    assert "select[name=category]" in text and "<script" not in text
    short = await probes.snapshot(max_tokens=200)
    assert len(short) <= 800 and "snapshot cut at its cap of ~200 tokens" in short


@in_chromium
async def test_count_records_only_matching_selectors(shared_page, demo_site):
    probes = await opened(shared_page, demo_site, "panel")
    assert await probes.count(ITEM) == 240 and probes.verified.count(ITEM) == 240
    assert await probes.count(".no-such-thing") == 0 and ".no-such-thing" not in probes.verified
    assert await probes.count("li..card") == 0


# --- no browser -----------------------------------------------------------------------------


def test_verified_selectors_keep_what_matched():
    verified = VerifiedSelectors()
    verified.add("li.card", 24, "describe_element")
    verified.add(".gone", 0, "probe_click")
    verified.add("li.card", 30, "scroll_and_observe")
    assert "li.card" in verified and ".gone" not in verified
    assert verified.count("li.card") == 30 and verified.count(".gone") is None
    assert verified.items() == {"li.card": 30}
    assert verified.sources("li.card") == ["describe_element", "scroll_and_observe"]


def test_tool_specs_are_openai_function_tools():
    names = [spec["function"]["name"] for spec in TOOL_SPECS]
    assert names == ["probe_click", "describe_element", "scroll_and_observe"]
    for spec in TOOL_SPECS:
        assert spec["type"] == "function" and len(spec["function"]["description"]) > 80
        parameters = spec["function"]["parameters"]
        assert parameters["type"] == "object" and parameters["required"]
