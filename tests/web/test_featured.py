"""An item shown apart before its list (a blog's featured newest post) is joined to the list;
a banner or another box before the list is not."""

import pytest
from support.requirements import in_chromium

from tui_agent.web.probe import find_lists, with_featured

POST = (
    '<article class="hentry"><h2 class="entry-title"><a href="/posts/{n}.html">Post {n}</a></h2>'
    '<footer class="post-info"><abbr class="published">Day {n}</abbr>'
    '<address class="vcard author">By <a class="url fn" href="/author/ada.html">Ada</a>'
    "</address></footer><p>Summary {n}.</p></article>"
)
FEATURED = (
    '<aside id="featured"><article><h1 class="entry-title"><a href="/posts/9.html">Post 9</a>'
    '</h1><footer class="post-info"><abbr class="published">Day 9</abbr>'
    '<address class="vcard author">By <a class="url fn" href="/author/ada.html">Ada</a>'
    "</address></footer><p>The whole post 9.</p></article></aside>"
)
BANNER = (
    '<aside class="promo"><article><h1 class="promo-title"><a href="/shop/mugs">Mugs</a></h1>'
    '<p class="promo-text">Buy a mug</p></article></aside>'
)


def blog(before: str, numbers: range) -> str:
    posts = "".join(f"<li>{POST.format(n=n)}</li>" for n in numbers)
    return f'<main>{before}<section id="content"><ol id="posts">{posts}</ol></section></main>'


async def listed(page, html: str) -> list[str]:
    await page.set_content(html)
    found = await with_featured(page, (await find_lists(page))[0])
    titles = page.locator(found.item).locator(".entry-title a, .promo-title a")
    assert await page.locator(found.item).count() == found.count
    return await titles.all_inner_texts()


@in_chromium
async def test_a_featured_post_before_the_list_is_its_first_item(page):
    assert await listed(page, blog(FEATURED, range(8, 4, -1))) == [
        "Post 9", "Post 8", "Post 7", "Post 6", "Post 5"
    ]  # fmt: skip


@in_chromium
@pytest.mark.parametrize("before", [BANNER, ""], ids=["banner", "nothing"])
async def test_a_box_of_another_shape_or_nothing_is_not_joined(page, before):
    assert await listed(page, blog(before, range(8, 4, -1))) == [
        "Post 8", "Post 7", "Post 6", "Post 5"
    ]  # fmt: skip
