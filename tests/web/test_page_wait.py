"""Waiting for a page to render, in real Chromium against a real loopback server.

A page whose script asks a slow endpoint is waited for until the answer is rendered (with a
progress look about every second); a quiet page is taken at once; a page that polls forever
is given up at the cap, or taken as soon as it is ready and its content stopped changing; a
page whose timer adds the content later is waited for, but not for timers that repeat or are
due after the cap.
"""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.requirements import in_chromium

from tui_agent.web.page_wait import QUIET, settle, settled

PAGES = {
    "/slow": """<!doctype html><meta charset="utf-8"><ul id="list"></ul><script>
      fetch("/api?delay=2").then((r) => r.json()).then((names) => {
        for (const name of names) {
          const li = document.createElement("li"); li.textContent = name;
          document.getElementById("list").append(li);
        }
      });</script>""",
    "/quiet": "<!doctype html><ul><li>one</li><li>two</li></ul>",
    "/polling": """<!doctype html><ul id="list"><li>ready</li></ul><script>
      setInterval(() => fetch("/api?delay=0.3"), 200);</script>""",
    "/timer": """<!doctype html><ul id="list"></ul><div id="box"></div><script>
      const box = document.getElementById("box");
      const tick = () => { box.style.left = performance.now() % 100 + "px"; setTimeout(tick, 16); };
      tick();
      setTimeout(() => {}, 60000);
      setTimeout(() => {
        for (const name of ["alpha", "beta", "gamma"]) {
          const li = document.createElement("li"); li.textContent = name;
          document.getElementById("list").append(li);
        }
      }, 3000);</script>""",
    "/ticking": """<!doctype html><ul id="list"></ul><div id="box"></div><script>
      const box = document.getElementById("box");
      const tick = () => { box.style.left = performance.now() % 100 + "px"; setTimeout(tick, 16); };
      tick();
      const poll = () => setTimeout(poll, 700);
      poll();
      setInterval(() => {}, 300);
      setTimeout(() => {}, 60000);</script>""",
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/api":
            time.sleep(float(query.removeprefix("delay=")))
            body, kind = b'["alpha", "beta", "gamma"]', "application/json"
        else:
            body, kind = PAGES[path].encode(), "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@in_chromium
async def test_a_slow_request_is_waited_for_until_its_answer_is_rendered(page, server):
    await page.goto(f"{server}/slow", wait_until="domcontentloaded")
    looks = [look async for look in settle(page, 10)]
    *progress, last = looks
    assert (last.done, last.why) == (True, "quiet")
    assert await page.locator("#list li").count() == 3
    assert progress and all(not look.done for look in progress)
    assert any(look.requests == 1 for look in progress)
    assert progress[0].line().startswith("waiting for the page to render: 1.")
    assert "1 request open" in progress[0].line()


@in_chromium
async def test_a_quiet_page_is_taken_at_once(page, server):
    await page.goto(f"{server}/quiet")
    looks = [look async for look in settle(page, 10)]
    *progress, last = looks
    assert (last.done, last.why) == (True, "quiet") and not any(p.done for p in progress)
    # taken once it has been quiet for QUIET s, far before the cap: on a loaded machine the
    # page may still render for a moment after `goto` (a progress look, then the verdict)
    assert last.elapsed < 2 + QUIET


@in_chromium
async def test_a_page_that_polls_forever_stops_at_the_cap_or_once_ready(page, server):
    await page.goto(f"{server}/polling")
    capped = await settled(page, 2.0)
    assert capped.why == "cap" and capped.elapsed >= 2.0
    assert capped.outcome().startswith("stopped waiting after 2.")

    async def ready() -> bool:
        return await page.locator("#list li").count() > 0

    taken = await settled(page, 10.0, ready=ready)
    assert taken.why == "ready" and taken.elapsed < 10.0


async def _settle_for_items(page) -> list:
    """The looks of a wait for #list's items, giving up after a second of quiet."""

    async def shown() -> bool:
        return await page.locator("#list li").count() > 0

    return [look async for look in settle(page, 8.0, ready=shown, patience=1.0)]


@in_chromium
async def test_a_timer_due_before_the_cap_is_waited_for_past_the_patience(page, server):
    await page.goto(f"{server}/timer")
    looks = await _settle_for_items(page)
    assert looks[-1].why == "quiet" and await page.locator("#list li").count() == 3
    assert 2.5 < looks[-1].elapsed < 8.0
    assert any("a timer due in" in look.line() for look in looks[:-1])


@in_chromium
async def test_repeating_timers_and_timers_past_the_cap_do_not_hold_the_wait(page, server):
    await page.goto(f"{server}/ticking")
    last = (await _settle_for_items(page))[-1]
    assert last.why == "quiet" and last.elapsed < 4.0
