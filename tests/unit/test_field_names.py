"""Naming fields from what a block's elements hint at: classes, labels, tags and values."""

from itertools import count
from typing import Any

import pytest

from tui_agent.web.plan import StrategyField
from tui_agent.web.plan.field_names import (
    Candidate,
    canonical,
    label_name,
    merge_fields,
    name_fields,
    scoped,
    value_kind,
)

_index = count()


def element(selector: str, tag: str = "span", text: str = "", **more: Any) -> Candidate:
    """A candidate as CANDIDATES_JS reports it; classes default to the selector's own."""
    classes = more.pop("classes", tuple(c for c in selector.split(".")[1:] if " " not in c))
    return Candidate(
        index=next(_index), selector=selector, tag=tag, text=text, classes=classes, **more
    )


def named(fields: dict[str, StrategyField]) -> dict[str, tuple[str, str | None]]:
    return {name: (spec.selector, spec.attribute) for name, spec in fields.items()}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("field-price", ("price", True)),
        ("card-title", ("title", True)),
        ("productName", ("title", True)),
        ("seller-name", ("seller", True)),
        ("price-currency", ("currency", True)),
        ("sold-by", ("seller", True)),
        ("item__categories", ("category", True)),
        ("details-link", ("url", False)),
        ("tag", ("tags", False)),
        ("post-tags", ("tags", True)),
        ("thumb", None),
        ("card-body", None),
    ],
)
def test_class_names_mean_fields_the_last_strong_word_winning(text, expected):
    assert canonical(text) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Listed", "date"),
        ("Sold by", "seller"),
        ("Price:", "price"),
        ("Condition", "condition"),
        ("Shipping weight", "shipping_weight"),
        ("What our customers say about it", None),
        ("2024", None),
    ],
)
def test_labels_name_known_fields_or_their_own(label, expected):
    assert label_name(label) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$12.50", "price"),
        ("€1,299.00", "price"),
        ("12,00 €", "price"),
        ("40 USD", "price"),
        ("USD", "currency"),
        ("2024-03-15", "date"),
        ("Mar 15, 2024", "date"),
        ("15 March 2024", "date"),
        ("4.5", "rating"),
        ("4 stars", "rating"),
        ("Kitchen", None),
        ("12", None),
    ],
)
def test_values_alone_say_price_currency_date_or_rating(text, expected):
    assert value_kind(text) == expected


def test_a_details_panel_is_named_field_by_field():
    dd_rating = element(".fields > dd:nth-of-type(3)", "dd", "★★★★☆ 4.5", label="Rating")
    fields = name_fields(
        [
            element(".field-title", "h2", "Classic Oak Kettle"),
            element(".fields", "dl", "Price $4.99 Currency USD Rating ★★★★☆ 4.5 Tags eco, gift"),
            element(".field-price", "dd", "$4.99", label="Price"),
            element(".field-currency", "dd", "USD", label="Currency"),
            dd_rating,
            element(".stars", text="★★★★☆", ancestors=(dd_rating.index,)),
            element(".field-rating", text="4.5", ancestors=(dd_rating.index,)),
            element(".fields > dd:nth-of-type(4)", "dd", "2024-01-01", label="Listed"),
            element(".field-date", "time", "2024-01-01", attributes={"datetime": "2024-01-01"}),
            element(".field-tags", "dd", "eco, gift", label="Tags"),
            element(".tag", text="eco", repeated=2),
            element(".field-url", "a", "Open the product page →", href="http://x/p/1"),
        ]
    )
    assert named(fields) == {
        "title": (".field-title", None),
        "price": (".field-price", None),
        "currency": (".field-currency", None),
        "rating": (".field-rating", None),  # the number, not the stars around it
        "date": (".field-date", None),
        "tags": (".field-tags", None),  # the list, not its first tag
        "url": (".field-url", "href"),
    }


def test_a_card_names_its_link_and_the_exact_price():
    card_price = element(".card-price", "p", "$4.99 USD")
    fields = name_fields(
        [
            element(".card-title", "h3", "Classic Oak Kettle"),
            element(
                ".details-link", "a", "Classic Oak Kettle", href="http://x/p/1", main_link=True
            ),
            card_price,
            element(".price", text="$4.99", ancestors=(card_price.index,)),
            element(".currency", text="USD", ancestors=(card_price.index,)),
            element(".thumb", "img", src="http://x/p/1.png", classes=("thumb",)),
            element(".badge-hot", text="Hot!"),
        ]
    )
    assert named(fields) == {
        "title": (".card-title", None),
        "price": (".price", None),
        "currency": (".currency", None),
        "url": (".details-link", "href"),
    }


def test_markup_hints_beat_looks_and_labels_make_new_names():
    fields = name_fields(
        [
            element('[itemprop="name"]', "div", "Blue Teapot", attributes={"itemprop": "name"}),
            element("h4", "h4", "Specifications"),
            element(
                '[itemprop="image"]', "img", src="http://x/1.png", attributes={"itemprop": "image"}
            ),
            element('[data-field="cost"]', "b", "€12.00", attributes={"data-field": "cost"}),
            element("b:nth-of-type(2)", "b", "€15.00"),
            element("td:nth-of-type(1)", "td", "Used", label="Condition"),
            element("td:nth-of-type(2)", "td", "12 March 2024", label="Posted on"),
            element("p", "p", "★★★★★", classes=("rating",)),
        ]
    )
    assert named(fields) == {
        "title": ('[itemprop="name"]', None),  # an itemprop over a mere heading
        "price": ('[data-field="cost"]', None),  # a data attribute over a price-like value
        "date": ("td:nth-of-type(2)", None),
        "image": ('[itemprop="image"]', "src"),
        "condition": ("td:nth-of-type(1)", None),
        # stars without a number are no rating
    }


def test_a_link_gives_both_its_text_and_its_address_once_each():
    only = element("a", "a", "Blue Teapot", href="http://x/1", main_link=True)
    assert named(name_fields([only])) == {"title": ("a", None), "url": ("a", "href")}


def test_samples_vote_per_name_and_add_what_one_item_lacks():
    price, other = StrategyField(selector=".price"), StrategyField(selector="b")
    merged = merge_fields(
        [
            {"url": StrategyField(selector="a", attribute="href"), "price": price},
            {"price": other, "title": StrategyField(selector="h3")},
            {"price": price, "condition": StrategyField(selector="td")},
        ]
    )
    assert list(merged) == ["title", "price", "url", "condition"]
    assert merged["price"] == price


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (":scope", "li.card"),
        (":scope > h3", "li.card > h3"),
        (".price", "li.card .price"),
    ],
)
def test_block_selectors_are_scoped_by_the_blocks_own(selector, expected):
    assert scoped(selector, "li.card") == expected


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("Categoría", "categoría"),
        ("Año de publicación", "año_de_publicación"),
        ("価格", "価格"),
        ("Цена", "цена"),
        ("السعر", "السعر"),
        ("Précio unitário", "précio_unitário"),
        ("Sold by", "seller"),
        ("Fecha de la publicación del libro", None),  # too long to be a name
    ],
)
def test_labels_keep_their_letters_in_any_script(label: str, name: str | None) -> None:
    assert label_name(label) == name


def test_a_value_after_its_label_keeps_the_label_to_drop_when_read() -> None:
    line = element("p:nth-of-type(2)", tag="p", text="Cocina", label="Categoría")
    line = Candidate(**{**line.__dict__, "prefix": "Categoría:"})
    [(name, spec)] = name_fields([line]).items()
    assert (name, spec.prefix) == ("categoría", "Categoría:")
    assert spec.as_binding() == {"selector": "p:nth-of-type(2)", "prefix": "Categoría:"}
