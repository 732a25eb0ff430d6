"""The demo catalog: 240 deterministic products and the ground truth each layout shows.

Every field value is the exact visible text a recipe reads from the page (whitespace-free at
both ends, single spaces inside): price "$12.50" / "€12.50" / "£12.50", currency "USD",
rating "4.5", date "2024-03-15", tags "eco, gift", category "Kitchen". The one exception is
`url`: the `href` of the item's link (a path such as "/products/p-001"; `base_url` makes it
absolute, as `element.href` gives it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

PRODUCT_COUNT = 240
PAGE_SIZE = 24
"""Products per page on the `pagination` layout (10 pages)."""
BATCH_SIZE = 20
"""Products per batch on the `infinite` and `loadmore` layouts (12 batches)."""
BATCH_DELAY_MS = 250
"""How long the `infinite` and `loadmore` layouts take to add a batch."""
SLOW_DELAY_MS = 800
"""How long the `slow` layout shows its spinner before the list appears."""

FIELDS = (
    "title",
    "price",
    "currency",
    "rating",
    "date",
    "seller",
    "category",
    "tags",
    "description",
    "url",
)
"""Every record's keys, in this order (the `missing` layout leaves some out)."""

LAYOUTS: dict[str, str] = {
    "panel": "Click a product: its details open in a side panel (the list stays).",
    "navigate": "Click a product: its own page opens; Back returns to the list.",
    "inline": "Click a product: its details expand under it; click again to fold.",
    "pagination": "Numbered pages of 24 with a Next link (gone on the last page).",
    "infinite": "Batches of 20 load by script as you scroll near the bottom.",
    "loadmore": "Batches of 20 appended by a Load more button (gone at the end).",
    "filter": "Category, sort and search controls (a GET form: the query is in the URL).",
    "slow": "The list appears behind a spinner after 800 ms.",
    "missing": "Some products lack some fields: those elements are absent from the page.",
    "modal": "Click a product: its details open in a dialog over a backdrop that blocks the "
    "list; only its close button closes it (not Escape).",
}
"""Layout name -> what it demonstrates; each is served at /<name>."""

CATEGORIES = {"kitchen": "Kitchen", "home": "Home", "outdoor": "Outdoor", "office": "Office"}
"""Category slug (the filter's `category` value) -> visible name."""
SORTS = ("featured", "price-asc", "price-desc", "rating", "newest", "title")
"""The filter's `sort` values; "featured" (catalog order) is the default."""

MISSING_RULES: dict[str, tuple[int, int]] = {
    "rating": (4, 0),
    "seller": (5, 2),
    "tags": (3, 1),
    "description": (7, 3),
    "date": (9, 5),
    "price": (11, 6),
    "currency": (11, 6),
}
"""On the `missing` layout, field -> (m, r): absent when product number % m == r."""

ADJECTIVES = ("Classic", "Compact", "Rustic", "Modern", "Vintage")
MATERIALS = ("Oak", "Copper", "Linen", "Walnut & Brass", "Ceramic", "Steel", "Bamboo")
NOUNS = (
    ("Kettle", "kitchen"),
    ("Skillet", "kitchen"),
    ("Lamp", "home"),
    ("Vase", "home"),
    ("Lantern", "outdoor"),
    ("Backpack", "outdoor"),
    ("Notebook", "office"),
    ("Desk Tray", "office"),
)
PHRASES = (
    "built to last for years",
    "finished by hand in small batches",
    "ships within two working days",
    "easy to clean and repair",
    "a favourite of our regulars",
    "made with recycled packaging",
    "light enough to take anywhere",
    "designed in our own workshop",
    "backed by a two-year warranty",
)
SELLERS = (
    "Northwind Goods",
    "Blue Harbor Co.",
    "Maple & Pine",
    "Oakridge Supply",
    "Little Fox Studio",
    "Granite Works",
    "Sunday Market",
    "Harbor Lights",
    "Copperfield Trading",
)
TAGS = (
    "eco",
    "handmade",
    "bestseller",
    "new",
    "gift",
    "sale",
    "limited",
    "local",
    "vintage-look",
    "bundle",
)
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}
FIRST_DATE = date(2024, 1, 1)


class DemoSiteError(ValueError):
    """An unknown layout or a query value the demo site does not have (one clear line)."""


@dataclass(frozen=True)
class Product:
    """One catalog product; `number` runs 1..240 in catalog ("featured") order."""

    number: int
    title: str
    cents: int
    currency: str
    rating_tenths: int
    listed: date
    seller: str
    category: str
    tags: tuple[str, ...]
    description: str

    @property
    def slug(self) -> str:
        return f"p-{self.number:03d}"

    @property
    def path(self) -> str:
        return f"/products/{self.slug}"

    @property
    def stars(self) -> int:
        return (self.rating_tenths + 5) // 10

    def fields(self, layout: str = "panel") -> dict[str, str]:
        """The record as a recipe extracts it on `layout` (url is the link's path)."""
        record = {
            "title": self.title,
            "price": f"{CURRENCY_SYMBOLS[self.currency]}{self.cents // 100}.{self.cents % 100:02d}",
            "currency": self.currency,
            "rating": f"{self.rating_tenths // 10}.{self.rating_tenths % 10}",
            "date": self.listed.isoformat(),
            "seller": self.seller,
            "category": CATEGORIES[self.category],
            "tags": ", ".join(self.tags),
            "description": self.description,
            "url": self.path,
        }
        if layout == "missing":
            for field, (modulus, remainder) in MISSING_RULES.items():
                if self.number % modulus == remainder:
                    del record[field]
        return record


def _product(index: int) -> Product:
    adjective = ADJECTIVES[index % len(ADJECTIVES)]
    material = MATERIALS[index % len(MATERIALS)]
    noun, category = NOUNS[index % len(NOUNS)]
    tag_count = 1 + index % 3
    return Product(
        number=index + 1,
        title=f"{adjective} {material} {noun}",
        cents=499 + (index * 7919) % 24000,
        currency="EUR" if index % 10 == 7 else "GBP" if index % 10 == 9 else "USD",
        rating_tenths=10 + (index * 37) % 41,
        listed=FIRST_DATE + timedelta(days=(index * 53) % 366),
        seller=SELLERS[(index * 7) % len(SELLERS)],
        category=category,
        tags=tuple(TAGS[(index + 4 * k) % len(TAGS)] for k in range(tag_count)),
        description=(
            f"{adjective} {noun.lower()} in {material.lower()}, {PHRASES[index % len(PHRASES)]}."
        ),
    )


PRODUCTS: tuple[Product, ...] = tuple(_product(index) for index in range(PRODUCT_COUNT))
BY_SLUG: dict[str, Product] = {product.slug: product for product in PRODUCTS}
PAGE_COUNT = -(-PRODUCT_COUNT // PAGE_SIZE)

QUERY_KEYS: dict[str, tuple[str, ...]] = {
    "pagination": ("page",),
    "filter": ("category", "sort", "q"),
}
"""The query parameters each layout understands (the others take none)."""

SORT_KEYS = {
    "featured": lambda p: p.number,
    "price-asc": lambda p: (p.cents, p.number),
    "price-desc": lambda p: (-p.cents, p.number),
    "rating": lambda p: (-p.rating_tenths, p.number),
    "newest": lambda p: (-p.listed.toordinal(), p.number),
    "title": lambda p: (p.title, p.number),
}


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise DemoSiteError(f"unknown layout {layout!r} (one of: {', '.join(LAYOUTS)})")
    return layout


def page_number(value: str | int | None) -> int:
    """The `pagination` page asked for (1 when absent)."""
    text = "1" if value in (None, "") else str(value)
    if not text.isdigit() or not 1 <= int(text) <= PAGE_COUNT:
        raise DemoSiteError(f"page must be 1..{PAGE_COUNT}, got {text!r}")
    return int(text)


def filtered(category: str = "", sort: str = "", q: str = "") -> list[Product]:
    """The `filter` layout's products: category slug, sort value and search text.

    The search keeps products whose title or description contains `q` (trimmed,
    case-insensitive); "" means no filter; sort ties break by catalog order.
    """
    if category and category not in CATEGORIES:
        raise DemoSiteError(f"unknown category {category!r} (one of: {', '.join(CATEGORIES)})")
    if sort and sort not in SORTS:
        raise DemoSiteError(f"unknown sort {sort!r} (one of: {', '.join(SORTS)})")
    needle = q.strip().lower()
    chosen = [
        product
        for product in PRODUCTS
        if (not category or product.category == category)
        and (needle in product.title.lower() or needle in product.description.lower())
    ]
    return sorted(chosen, key=SORT_KEYS[sort or "featured"])


def listing(layout: str, query: Mapping[str, str | int] | None = None) -> list[Product]:
    """The products `layout` shows for `query`, in page order.

    `pagination` without `page` means all pages in order (what paging to the end yields);
    `infinite` and `loadmore` mean every batch (what scrolling / clicking to the end yields).
    """
    query = dict(query or {})
    allowed = QUERY_KEYS.get(check_layout(layout), ())
    unknown = sorted(set(query) - set(allowed))
    if unknown:
        takes = ", ".join(allowed) or "no query parameters"
        raise DemoSiteError(f"layout {layout!r} takes {takes}; got {', '.join(unknown)}")
    if layout == "filter":
        return filtered(**{key: str(value) for key, value in query.items()})
    if layout == "pagination" and "page" in query:
        start = (page_number(query["page"]) - 1) * PAGE_SIZE
        return list(PRODUCTS[start : start + PAGE_SIZE])
    return list(PRODUCTS)


def ground_truth(layout: str, *, base_url: str = "", **query: str | int) -> list[dict[str, str]]:
    """Exactly the records `layout` shows for `query`, in page order, as a recipe extracts them.

    `base_url` (e.g. DemoSite.base_url) is prefixed to each `url`; query values are the URL's
    (`page` for pagination; `category`, `sort`, `q` for filter).
    """
    records = [product.fields(layout) for product in listing(layout, query)]
    for record in records:
        record["url"] = base_url + record["url"]
    return records
