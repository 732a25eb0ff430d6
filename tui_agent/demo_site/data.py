"""The demo catalog: 240 deterministic products and the ground truth each layout shows.

Every field value is the exact visible text a recipe reads from the page (whitespace-free at
both ends, single spaces inside): price "$12.50" / "€12.50" / "£12.50", currency "USD",
rating "4.5", date "2024-03-15", tags "eco, gift", category "Kitchen". The one exception is
`url`: the `href` of the item's link (a path such as "/products/p-001"; `base_url` makes it
absolute, as `element.href` gives it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

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
    "late": "No spinner: the page waits on a slow request, then fills the list 3-5 s after load.",
    "rows": "A table: each product is a title row plus a row of seller and tag links; pages "
    "of 10 behind a '← Previous | Next →' row (no class, no rel); a sidebar cell of tags.",
    "es": "A Spanish shop: 'Precio:', 'Categoría:', 'Año de publicación:' labels, a category "
    "select and sort links.",
    "facets": "Category links, tag checkboxes and sort buttons; tags and sorts re-render the "
    "list by script.",
    "dropdown": "A category dropdown that opens on click (not a <select>) and sort radio buttons.",
    "escape": "Click a product: its details open in a dialog with no close button; only Escape "
    "closes it.",
    "prose": "Each product's page tells its details in sentences, with no labels or classes: "
    "only a model reads fields from it.",
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

    def fields(self, layout: str = "panel") -> dict[str, Any]:
        """The record as a recipe extracts it on `layout` (url is the link's path; tags a
        list)."""
        record = {
            "title": self.title,
            "price": f"{CURRENCY_SYMBOLS[self.currency]}{self.cents // 100}.{self.cents % 100:02d}",
            "currency": self.currency,
            "rating": f"{self.rating_tenths // 10}.{self.rating_tenths % 10}",
            "date": self.listed.isoformat(),
            "seller": self.seller,
            "category": CATEGORIES[self.category],
            "tags": list(self.tags),
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
ROWS_PAGE_SIZE = 10
ROWS_PAGES = 3
"""The `rows` layout shows the first 30 products, 10 a page."""
LATE_WAIT_MS = 1500
"""How long the `late` layout's script waits before it asks for its list..."""
LATE_API_DELAY_MS = 2500
"""...and how long the server then takes to answer (no spinner meanwhile)."""
PROSE_FACTS = ("price", "seller", "date", "rating")
"""The fields the `prose` layout's detail page tells in sentences."""

QUERY_KEYS: dict[str, tuple[str, ...]] = {
    "pagination": ("page",),
    "filter": ("category", "sort", "q"),
    "rows": ("p",),
    "es": ("categoria", "orden"),
    "facets": ("category", "tag", "sort"),
    "dropdown": ("category", "sort"),
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
    if layout == "rows":
        shown = PRODUCTS[: ROWS_PAGE_SIZE * ROWS_PAGES]
        if "p" not in query:
            return list(shown)
        start = (rows_page(query["p"]) - 1) * ROWS_PAGE_SIZE
        return list(shown[start : start + ROWS_PAGE_SIZE])
    if layout == "es":
        return filtered(
            category=_known(str(query.get("categoria", "")), CATEGORIES, "categoria"),
            sort=_known(str(query.get("orden", "")), SORTS, "orden"),
        )
    if layout in ("facets", "dropdown"):
        tag = str(query.get("tag", ""))
        if tag and tag not in TAGS:
            raise DemoSiteError(f"unknown tag {tag!r} (one of: {', '.join(TAGS)})")
        chosen = filtered(category=str(query.get("category", "")), sort=str(query.get("sort", "")))
        return [product for product in chosen if not tag or tag in product.tags]
    return list(PRODUCTS)


def _known(value: str, allowed: Collection[str], key: str) -> str:
    if value and value not in allowed:
        raise DemoSiteError(f"unknown {key} {value!r} (one of: {', '.join(allowed)})")
    return value


def rows_page(value: str | int | None) -> int:
    """The `rows` page asked for (1 when absent)."""
    text = "1" if value in (None, "") else str(value)
    if not text.isdigit() or not 1 <= int(text) <= ROWS_PAGES:
        raise DemoSiteError(f"p must be 1..{ROWS_PAGES}, got {text!r}")
    return int(text)


def ground_truth(layout: str, *, base_url: str = "", **query: str | int) -> list[dict[str, Any]]:
    """Exactly the records `layout` shows for `query`, in page order, as a recipe extracts them.

    `base_url` (e.g. DemoSite.base_url) is prefixed to each `url`; query values are the URL's
    (`page` for pagination; `category`, `sort`, `q` for filter).
    """
    products = listing(layout, query)
    if layout == "es":
        records = [spanish_record(product) for product in products]
    elif layout == "prose":
        records = [{"title": p.title, "url": prose_path(p)} for p in products]
    else:
        records = [product.fields(layout) for product in products]
    for record in records:
        record["url"] = base_url + record["url"]
    return records


def prose_facts(product: Product) -> dict[str, str]:
    """What the `prose` layout's detail page says only in sentences (read by a model)."""
    fields = product.fields()
    return {name: fields[name] for name in PROSE_FACTS}


def prose_path(product: Product) -> str:
    return f"/prose/{product.slug}"


# -- the Spanish shop (`es`) -----------------------------------------------------------------

CATEGORIES_ES = {"kitchen": "Cocina", "home": "Hogar", "outdoor": "Exterior", "office": "Oficina"}
NOUNS_ES = {
    "Kettle": "hervidor", "Skillet": "sartén", "Lamp": "lámpara", "Vase": "jarrón",
    "Lantern": "farol", "Backpack": "mochila", "Notebook": "cuaderno", "Desk Tray": "bandeja",
}  # fmt: skip
MATERIALS_ES = {
    "Oak": "roble", "Copper": "cobre", "Linen": "lino", "Walnut & Brass": "nogal y latón",
    "Ceramic": "cerámica", "Steel": "acero", "Bamboo": "bambú",
}  # fmt: skip
PHRASES_ES = (
    "hecho para durar años",
    "acabado a mano en pequeñas series",
    "se envía en dos días laborables",
    "fácil de limpiar y reparar",
    "uno de los favoritos de nuestros clientes",
    "con embalaje reciclado",
    "ligero para llevarlo a todas partes",
    "diseñado en nuestro propio taller",
    "con dos años de garantía",
)
ES_FIELDS = (
    "title", "precio", "categoría", "año_de_publicación", "vendedor", "descripción", "url"
)  # fmt: skip
"""The Spanish shop's records: the field names its labels give."""


def spanish_record(product: Product) -> dict[str, str]:
    """A product as the Spanish shop shows it (prices "12,50 €", Spanish words)."""
    index = product.number - 1
    noun = next(es for en, es in NOUNS_ES.items() if product.title.endswith(en))
    material = next(es for en, es in MATERIALS_ES.items() if f" {en} " in f" {product.title} ")
    amount = f"{product.cents // 100},{product.cents % 100:02d}"
    return {
        "title": product.title,
        "precio": f"{amount} {CURRENCY_SYMBOLS[product.currency]}",
        "categoría": CATEGORIES_ES[product.category],
        "año_de_publicación": str(2014 + (product.number * 3) % 11),
        "vendedor": product.seller,
        "descripción": f"{noun.capitalize()} de {material}, {PHRASES_ES[index % len(PHRASES_ES)]}.",
        "url": f"/es/productos/{product.slug}",
    }
