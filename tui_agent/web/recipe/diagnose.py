"""What a page shows instead of the expected list: its title and its repeated containers.

A hard failure names the LIST_ITEM selector that matched nothing and this description, so the
broken selector and a likely replacement are in one line.
"""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.web.recipe.conditions import VISIBLE

# Groups of >= 3 shown siblings with the same tag and first class, largest first.
CANDIDATES_JS = """
(limit) => {
  VISIBLE
  const sig = (el) => el.tagName.toLowerCase() + (el.classList.length ? "." + el.classList[0] : "");
  const groups = [];
  for (const parent of document.body ? document.body.querySelectorAll("*") : []) {
    if (parent.children.length < 3 || !visible(parent)) continue;
    const counts = new Map();
    for (const child of parent.children) {
      if (!visible(child) || ["script", "style", "br"].includes(child.localName)) continue;
      const key = sig(child);
      if (!counts.has(key)) counts.set(key, [0, child]);
      counts.get(key)[0] += 1;
    }
    for (const [key, [count, first]] of counts) {
      if (count < 3) continue;
      const text = (first.innerText || "").replace(/\\s+/g, " ").trim().slice(0, 40);
      groups.push({selector: sig(parent) + " > " + key, count, text});
    }
  }
  groups.sort((a, b) => b.count - a.count);
  const body = document.body ? document.body.innerText.replace(/\\s+/g, " ").trim() : "";
  return {title: document.title, groups: groups.slice(0, limit), body: body.slice(0, 80)};
}
""".replace("VISIBLE", VISIBLE)


async def describe_page(page: Page, limit: int = 3) -> str:
    """The page's address and title, and what repeats on it (or its first words)."""
    try:
        seen = await page.evaluate(CANDIDATES_JS, limit)
    except PlaywrightError:
        return f"{page.url} (the page could not be read)"
    title = f' (title "{seen["title"]}")' if seen["title"] else ""
    if seen["groups"]:
        shown = ", ".join(
            f'{g["count"]} of "{g["selector"]}" (first: "{g["text"]}")' for g in seen["groups"]
        )
        return f"{page.url}{title}; the page shows instead: {shown}"
    words = f'its text begins "{seen["body"]}"' if seen["body"] else "it shows no text"
    return f"{page.url}{title}; no repeated containers, {words}"
