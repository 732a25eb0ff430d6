"""The link in each list item that leads to the page a task names ("the author page").

`LINKS_JS` describes the links of one item: their address, text, classes and what stands right
before them (the author's name before an "(about)" link). `link_selectors(links, thing)` ranks
them by how well they name `thing` (its word in the address's path, the link's classes or
text, or the element just before it) and gives item-relative selectors for the best one, the
most specific first; the planner keeps the first that every item holds.
"""

from __future__ import annotations

import re
from typing import Any

LINKS_JS = """([item, index]) => {
  const root = document.querySelectorAll(item)[index];
  if (!root) return [];
  const clean = (t) => (t || "").replace(/\\s+/g, " ").trim();
  const named = (el) => el ? [el.className, el.id, el.getAttribute("itemprop"),
    el.getAttribute("rel")].filter((v) => typeof v === "string" && v).join(" ") : "";
  return [...root.querySelectorAll("a[href]")].map((a) => {
    const before = a.previousElementSibling;
    return {
      href: a.getAttribute("href") || "", text: clean(a.innerText).slice(0, 80),
      names: named(a), classes: [...a.classList], before: named(before),
      before_tag: before ? before.tagName.toLowerCase() : "", parent: named(a.parentElement),
    };
  });
}"""
"""[item selector, index]: each link of that item, described."""

_CLEAN_CLASS = re.compile(r"^-?[A-Za-z_][\w-]*$")


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.findall(r"[^\W_]+", spaced.lower())


def _stem(word: str) -> str:
    for suffix in ("es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _names(text: str, thing: str) -> bool:
    """Whether `text` has a word of the same stem as `thing` (or starts with it)."""
    wanted = _stem(thing.lower())
    return any(_stem(word) == wanted or word.startswith(wanted) for word in _words(text))


def _path(href: str) -> str:
    """The address without its scheme, host, query and fragment."""
    path = re.sub(r"^[a-z][\w+.-]*://[^/]*", "", href, flags=re.IGNORECASE)
    return re.split(r"[?#]", path, maxsplit=1)[0]


def score(link: dict[str, Any], thing: str) -> int:
    """How well a link names `thing`: 0 when it does not."""
    points = 0
    points += 3 if _names(_path(link["href"]), thing) else 0
    points += 3 if _names(link["names"], thing) else 0
    points += 2 if _names(link["text"], thing) else 0
    points += 2 if _names(link["before"], thing) else 0
    points += 1 if _names(link["parent"], thing) else 0
    return points


def _segment(href: str, thing: str) -> str | None:
    """The part of the address's path that names `thing` ("author/" for "/author/x")."""
    parts = _path(href).split("/")
    for index, part in enumerate(parts):
        if part and _names(part, thing):
            return part + ("/" if index < len(parts) - 1 else "")
    return None


def link_selectors(links: list[dict[str, Any]], thing: str) -> list[str]:
    """Item-relative selectors of the link that best names `thing`, most specific first
    (none when no link names it)."""
    ranked = sorted(
        ((score(link, thing), -index, link) for index, link in enumerate(links)),
        key=lambda entry: (entry[0], entry[1]),
        reverse=True,
    )
    if not ranked or ranked[0][0] == 0:
        return []
    link = ranked[0][2]
    selectors = [
        f"a.{name}" for name in link["classes"] if _CLEAN_CLASS.match(name) and _names(name, thing)
    ]
    segment = _segment(link["href"], thing)
    if segment:
        selectors.append(f'a[href*="{segment}"]')
    before = [name for name in link["before"].split() if _CLEAN_CLASS.match(name)]
    for name in before:
        if _names(name, thing) and link["before_tag"]:
            selectors.append(f"{link['before_tag']}.{name} + a")
    selectors += [f"a.{name}" for name in link["classes"] if _CLEAN_CLASS.match(name)]
    return list(dict.fromkeys(selectors))
